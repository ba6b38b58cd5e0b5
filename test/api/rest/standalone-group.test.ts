import { join } from 'node:path'
import { Hono } from 'hono'
import { COMPOSED_HANDLER } from 'hono/utils/constants'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  createApiKey,
  createDatabaseApiKeyProvider,
  type DatabaseApiKeyProvider,
} from '../../../src/api/index.ts'
import { createRateLimiters, perIp } from '../../../src/core/http/rate-limiters.ts'
import { silentLogger } from '../../../src/core/index.ts'
import { createDatabase, type Database, migrate } from '../../../src/db/index.ts'
import {
  type GeneratedApi,
  type ScaffoldedApp,
  scaffoldApp,
  testHashPassword,
} from './generated-app.ts'

/**
 * The generated group mounted exactly as `make:api` prints it, in an app with no error handler
 * of its own: errors still answer JSON, scopes are enforced per route, a per-key limiter sees
 * the key while refused keys are limited per IP, and the docs take a version and description.
 */
describe('the generated /api/v1 group, mounted as printed', () => {
  let scaffolded: ScaffoldedApp
  let database: Database
  let apiKeys: DatabaseApiKeyProvider
  let generated: GeneratedApi
  const keys: Record<string, string> = {}

  beforeAll(async () => {
    scaffolded = await scaffoldApp('sqlite')
    database = await createDatabase('sqlite::memory:')
    await migrate(database, { appMigrationsDir: join(scaffolded.root, 'migrations') })
    generated = (await import(join(scaffolded.outDir, 'index.ts'))) as GeneratedApi
    apiKeys = createDatabaseApiKeyProvider({ database, logger: silentLogger() })
    for (const [name, scopes] of Object.entries({
      all: ['*'],
      postsReader: ['posts:read'],
      usersWriter: ['users:write', 'users:read'],
      none: [] as string[],
    })) {
      keys[name] = (await createApiKey(database, { name, scopes })).rawKey
    }
  })
  afterAll(async () => {
    await apiKeys?.close()
    await database?.close()
    scaffolded?.cleanup()
  })

  /** A bare Hono app: no `onError`, no `notFound`, only the group and its docs. */
  const mount = (limit: Parameters<typeof createRateLimiters>[0] = {}, app = new Hono()) => {
    app.route(
      '/',
      generated.apiRoutes({
        database,
        apiKeys,
        limiters: createRateLimiters(limit),
        hashPassword: testHashPassword,
        logger: silentLogger(),
      }),
    )
    app.route(
      '/',
      generated.docsRoutes({ app, title: 'Shop', version: '2.4.0', description: 'The shop API.' }),
    )
    return app
  }
  const send = (app: Hono, method: string, path: string, key?: string, body?: unknown) =>
    app.request(path, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    })

  it('answers its own client errors as JSON: 401, 404, 422 (never a 500 text/plain)', async () => {
    const app = mount()
    const unauthenticated = await send(app, 'GET', '/api/v1/posts')
    expect(unauthenticated.status).toBe(401)
    expect(unauthenticated.headers.get('www-authenticate')).toBe('Bearer')
    expect(await unauthenticated.json()).toEqual({
      error: 'Unauthenticated',
      code: 'unauthenticated',
    })
    const missing = await send(app, 'GET', '/api/v1/posts/424242', keys.all)
    expect(missing.status).toBe(404)
    expect(await missing.json()).toEqual({ error: 'Not Found', code: 'not_found' })
    const invalid = await send(app, 'POST', '/api/v1/posts', keys.all, { title: '' })
    expect(invalid.status).toBe(422)
    expect(invalid.headers.get('content-type')).toMatch(/application\/json/)
    expect(((await invalid.json()) as { errors: object }).errors).toHaveProperty('body')
  })

  it("answers kiln's JSON under an app's own error handler, and Hono's prints no kiln error", async () => {
    const printed = vi.spyOn(console, 'error').mockImplementation(() => {})
    try {
      const bare = await send(mount(), 'GET', '/api/v1/posts/424242', keys.all)
      expect(bare.status).toBe(404)
      expect(printed).not.toHaveBeenCalled()
    } finally {
      printed.mockRestore()
    }
    const own = new Hono()
    own.onError((_error, c) => c.text('Something broke', 500))
    const app = mount({}, own)
    const missing = await send(app, 'GET', '/api/v1/posts/424242', keys.all)
    expect(missing.status).toBe(404)
    expect(await missing.json()).toEqual({ error: 'Not Found', code: 'not_found' })
    const invalid = await send(app, 'POST', '/api/v1/posts', keys.all, { title: '' })
    expect(invalid.status).toBe(422)
    expect(((await invalid.json()) as { errors: object }).errors).toHaveProperty('body')
  })

  it('has no error handler of its own, so Hono wraps none of its handlers when it is mounted', () => {
    // A group with `onError` is mounted with each handler inside an error boundary of its own
    // (Hono's `route`), allocated again on every request (docs/performance.md).
    const wrapped = mount().routes.filter((route) => COMPOSED_HANDLER in route.handler)
    expect(wrapped.map((route) => `${route.method} ${route.path}`)).toEqual([])
  })

  it('enforces <resource>:read on index/show and <resource>:write on store/update/destroy', async () => {
    const app = mount()
    const user = await send(app, 'POST', '/api/v1/users', keys.usersWriter, {
      email: 'scoped@example.com',
      name: 'Scoped',
      password: 'long enough password',
    })
    expect(user.status).toBe(201)
    const { id } = ((await user.json()) as { data: { id: number } }).data
    const cases: Array<[string, string, string, number]> = [
      ['postsReader', 'GET', '/api/v1/posts', 200],
      ['postsReader', 'GET', `/api/v1/users/${id}`, 403],
      ['postsReader', 'PUT', `/api/v1/users/${id}`, 403],
      ['postsReader', 'DELETE', `/api/v1/users/${id}`, 403],
      ['postsReader', 'POST', '/api/v1/posts', 403],
      ['none', 'GET', '/api/v1/posts', 403],
      ['usersWriter', 'PUT', `/api/v1/users/${id}`, 200],
      ['all', 'GET', `/api/v1/users/${id}`, 200],
    ]
    for (const [key, method, path, status] of cases) {
      const body = method === 'PUT' || method === 'POST' ? { name: 'Renamed' } : undefined
      const response = await send(app, method, path, keys[key], body)
      expect(response.status, `${key} ${method} ${path}`).toBe(status)
      if (status === 403) {
        expect(await response.json()).toEqual({
          error: expect.stringMatching(/^This API key lacks the scope (posts|users):(read|write)$/),
          code: 'forbidden',
        })
      }
    }
  })

  it('a limiter per key sees the key; requests with a refused key are limited per IP', async () => {
    const app = mount({
      limiters: {
        api: (r) => (r.apiKey ? { key: `key:${r.apiKey.id}`, points: 3 } : perIp(r, 2)),
      },
    })
    const statuses = async (key: string | undefined, n: number) => {
      const out: number[] = []
      for (let i = 0; i < n; i++) out.push((await send(app, 'GET', '/api/v1/posts', key)).status)
      return out
    }
    expect(await statuses(keys.all, 4)).toEqual([200, 200, 200, 429])
    // Another key has its own bucket: the first key's use does not count against it.
    expect(await statuses(keys.postsReader, 3)).toEqual([200, 200, 200])
    // No key, then a wrong one: two refusals per IP, then 429 before any lookup counts more.
    const wrong = `${keys.all!.slice(0, -4)}AAAA`
    expect([...(await statuses(undefined, 2)), ...(await statuses(wrong, 2))]).toEqual([
      401, 401, 429, 429,
    ])
    const limited = await send(app, 'GET', '/api/v1/posts', wrong)
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/)
    expect(limited.headers.get('ratelimit-remaining')).toBe('0')
    // A valid key from the same address still works: refusals do not spend its bucket.
    const another = (await createApiKey(database, { name: 'fresh', scopes: ['*'] })).rawKey
    expect(await statuses(another, 1)).toEqual([200])
  })

  it('the default limiter stays 60 per minute per IP for keyed and refused requests alike', async () => {
    const app = mount({ limiters: { api: { points: 3 } } })
    const seen: number[] = []
    for (const key of [keys.all, undefined, keys.postsReader, keys.all]) {
      seen.push((await send(app, 'GET', '/api/v1/posts', key)).status)
    }
    expect(seen).toEqual([200, 401, 200, 429])
  })

  it('docsRoutes takes the document version and description', async () => {
    const app = mount()
    const doc = (await (await app.request('/api/openapi.json')).json()) as {
      info: Record<string, string>
    }
    expect(doc.info).toEqual({ title: 'Shop', version: '2.4.0', description: 'The shop API.' })
  })

  it('documents the scopes of each operation', async () => {
    const app = mount()
    const doc = (await (await app.request('/api/openapi.json')).json()) as {
      paths: Record<string, Record<string, Record<string, unknown>>>
    }
    const put = doc.paths['/api/v1/users/{id}']?.put
    expect(put?.['x-scopes']).toEqual(['users:write'])
    expect(put?.description).toContain('`users:write`')
    expect(put?.responses).toHaveProperty('403')
    expect(doc.paths['/api/v1/posts']?.get?.['x-scopes']).toEqual(['posts:read'])
  })
})
