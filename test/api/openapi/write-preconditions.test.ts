import SwaggerParser from '@apidevtools/swagger-parser'
import { Hono } from 'hono'
import { beforeAll, describe, expect, it } from 'vitest'
import { apiRoutes, docsRoutes } from '../../../examples/demo/src/api/routes.ts'
import type { ApiKeyProvider } from '../../../src/api/provider/api-key-provider.ts'
import { createRateLimiters } from '../../../src/core/http/rate-limiters.ts'
import type { Database } from '../../../src/db/database.ts'
import { redoclyLint } from './lint.ts'

type Parameter = { name: string; in: string }
type Operation = {
  operationId: string
  parameters?: Parameter[]
  responses: Record<string, { $ref?: string; headers?: Record<string, unknown> }>
}
type Doc = {
  paths: Record<string, Record<string, Operation>>
  components: { responses: Record<string, { description: string }> }
}

/**
 * What the routes honour, the documents say: `If-Match` and its 412 on PUT, PATCH and DELETE of
 * a record, the `ETag` that `show` sends for it, in the 3.0 and the 3.1 document alike.
 */
describe('the OpenAPI documents describe If-Match, 412 and ETag', () => {
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
  const docs: Record<string, Doc> = {}

  beforeAll(async () => {
    for (const version of ['3.0', '3.1']) {
      const path = version === '3.0' ? '/api/openapi.json' : '/api/openapi-3.1.json'
      docs[version] = (await (await app.request(path)).json()) as Doc
    }
  })

  for (const version of ['3.0', '3.1']) {
    it(`${version}: every write of one record takes If-Match and may answer 412`, () => {
      const doc = docs[version]!
      const items = Object.keys(doc.paths).filter((path) => /^\/api\/v1\/\w+\/\{id\}$/.test(path))
      expect(items.length).toBeGreaterThanOrEqual(4)
      for (const path of items) {
        for (const method of ['put', 'patch', 'delete']) {
          const operation = doc.paths[path]![method]!
          const ifMatch = operation.parameters?.find((p) => p.name === 'If-Match')
          expect(ifMatch, `${method} ${path}`).toMatchObject({ in: 'header', required: false })
          expect(operation.responses['412']).toEqual({ $ref: '#/components/responses/412' })
        }
        const show = doc.paths[path]!.get!
        expect(show.responses['200']!.headers, `get ${path}`).toHaveProperty('ETag')
        expect(show.parameters?.map((p) => p.name)).not.toContain('If-Match')
      }
      expect(doc.components.responses['412']!.description).toMatch(/If-Match/)
    })

    it(`${version}: valid under swagger-parser, and redocly finds no error`, async () => {
      const doc = docs[version]!
      await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy()
      expect((await redoclyLint(doc)).totals.errors).toBe(0)
    })
  }
})
