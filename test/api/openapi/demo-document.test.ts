import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { apiRoutes, docsRoutes } from '../../../examples/demo/src/api/routes.ts'
import type { ApiKeyProvider } from '../../../src/api/provider/api-key-provider.ts'
import { createRateLimiters } from '../../../src/core/http/rate-limiters.ts'
import type { Database } from '../../../src/db/database.ts'

/**
 * The demo's OpenAPI 3.0 and 3.1 documents, byte for byte, against the files beside this test.
 * Building the routes opens no connection, so a stand-in database is enough. A deliberate change
 * to the documents updates the files with `npx vitest run -u` and shows in review as their diff.
 */
describe("the demo's OpenAPI documents", () => {
  const database = { dialect: 'postgres', db: {} } as unknown as Database
  const apiKeys: ApiKeyProvider = {
    verifyKey: () => Promise.reject(new Error('not called: the documents need no key')),
  }
  const app = new Hono()
  app.route(
    '/',
    apiRoutes({
      database,
      apiKeys,
      limiters: createRateLimiters({ limiters: { api: { points: 1_000 } } }),
      hashPassword: async (password) => password,
    }),
  )
  app.route('/', docsRoutes({ app, title: 'Demo', version: '1.0.0' }))

  async function body(path: string): Promise<string> {
    const response = await app.request(path)
    expect(response.status).toBe(200)
    return `${JSON.stringify(JSON.parse(await response.text()), null, 2)}\n`
  }

  it('3.0 is unchanged', async () => {
    await expect(await body('/api/openapi.json')).toMatchFileSnapshot(
      './__snapshots__/demo-openapi-3.0.json.snap',
    )
  })

  it('3.1 is unchanged', async () => {
    await expect(await body('/api/openapi-3.1.json')).toMatchFileSnapshot(
      './__snapshots__/demo-openapi-3.1.json.snap',
    )
  })
})
