import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type ApiEnv,
  apiGuard,
  apiKeyAuth,
  createApiKey,
  createDatabaseApiKeyProvider,
  type DatabaseApiKeyProvider,
  getApiKey,
  privateCache,
  requireScopes,
  twoStageThrottle,
} from '../../../src/api/index.ts'
import { bodyLimit } from '../../../src/core/http/body-limit.ts'
import {
  createRateLimiters,
  perIp,
  type RateLimiters,
  type RateLimitersOptions,
} from '../../../src/core/http/rate-limiters.ts'
import { throttle } from '../../../src/core/http/throttle.ts'
import { errorHandler, NotFoundError } from '../../../src/core/index.ts'
import { createDatabase, type Database, migrate } from '../../../src/db/index.ts'
import { redisUrl } from '../../support/env.ts'
import { createTestRedis, type TestRedis } from '../../support/redis.ts'
import { captureLog } from '../support.ts'

/**
 * `apiGuard` does what the group's five middlewares did (privateCache, the two-stage limiter
 * around apiKeyAuth, bodyLimit): the same requests get the same answers from both, on the
 * memory and the Redis limiter, with keys from a real key store.
 */
let database: Database
let provider: DatabaseApiKeyProvider
let testRedis: TestRedis | undefined
const keys: Record<string, string> = {}
let unique = 0

beforeAll(async () => {
  database = await createDatabase('sqlite::memory:')
  await migrate(database, { logger: { info: () => {}, warn: () => {} } })
  provider = createDatabaseApiKeyProvider({ database })
  keys.all = (await createApiKey(database, { name: 'all', scopes: ['*'] })).rawKey
  keys.reader = (await createApiKey(database, { name: 'reader', scopes: ['posts:read'] })).rawKey
  keys.other = (await createApiKey(database, { name: 'other', scopes: ['*'] })).rawKey
  if (redisUrl) testRedis = await createTestRedis()
})
afterAll(async () => {
  await provider.close()
  await database.close()
  await testRedis?.cleanup()
})

const backends = [
  {
    name: 'memory',
    available: true,
    open: async (options: RateLimitersOptions) => createRateLimiters(options),
  },
  {
    name: 'redis',
    available: redisUrl !== undefined,
    open: async (options: RateLimitersOptions) => {
      if (!testRedis) throw new Error('no Redis')
      const redis = testRedis.connections.connect({ name: 'limiter' })
      // As SharedState does at start-up: until the client is ready, limits count in memory.
      await redis.ping()
      return createRateLimiters({ ...options, redis, prefix: `${testRedis.prefix}:${unique++}` })
    },
  },
]

type Guarding = (group: Hono<ApiEnv>, limiters: RateLimiters) => Hono<ApiEnv>
const MAX_BYTES = 64

/** The group as generated before `apiGuard`: five middlewares. */
const layered: Guarding = (group, limiters) => {
  const limit = twoStageThrottle(limiters, 'api')
  return group
    .use(privateCache())
    .use(limit.beforeAuth)
    .use(apiKeyAuth({ provider }))
    .use(limit.afterAuth)
    .use(bodyLimit({ maxBytes: MAX_BYTES }))
}
const guarded: Guarding = (group, limiters) =>
  group.use(apiGuard({ apiKeys: provider, limiters, limiter: 'api', maxBodyBytes: MAX_BYTES }))

/** An app mounting the group as the demo does, with routes answering in every way. */
function appWith(guard: Guarding, limiters: RateLimiters, outer?: RateLimiters) {
  const group = guard(
    new Hono<ApiEnv>().basePath('/api/v1').onError(errorHandler({ logger: captureLog().logger })),
    limiters,
  )
  group.get('/records/:id', (c) => {
    if (c.req.param('id') === '404') throw new NotFoundError()
    return c.json({ data: { id: c.req.param('id'), key: getApiKey(c).name } })
  })
  group.post('/records', async (c) => c.json({ data: await c.req.json() }, 201))
  group.get('/text', (c) => {
    c.header('X-Handler', 'yes')
    return c.text('plain')
  })
  group.get('/raw', () => new Response('raw', { headers: { 'X-Raw': '1' } }))
  group.delete('/records/:id', (c) => {
    requireScopes(c, 'posts:write')
    return c.body(null, 204)
  })
  const app = new Hono()
  if (outer) app.use(throttle(outer, 'outer'))
  app.route('/', group)
  return app
}

interface Answer {
  status: number
  body: string
  headers: Record<string, string>
}

async function answer(app: Hono, path: string, init: RequestInit = {}): Promise<Answer> {
  const response = await app.request(path, init)
  const headers = Object.fromEntries(response.headers)
  for (const seconds of ['ratelimit-reset', 'retry-after']) {
    // Seconds left in a window both sides opened a moment apart: checked, then left out.
    if (headers[seconds] !== undefined) {
      expect(Number(headers[seconds])).toBeGreaterThanOrEqual(1)
      expect(Number(headers[seconds])).toBeLessThanOrEqual(60)
      headers[seconds] = 'seconds'
    }
  }
  return { status: response.status, body: await response.text(), headers }
}

const bearer = (key: string | undefined, extra: Record<string, string> = {}) => ({
  headers: { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...extra },
})

for (const backend of backends) {
  describe.skipIf(!backend.available)(`apiGuard [${backend.name}]`, () => {
    /** The same requests against the layered group and apiGuard, answers compared. */
    async function bothAnswer(
      limits: RateLimitersOptions['limiters'],
      requests: Array<[string, RequestInit?]>,
      outerPoints?: number,
    ): Promise<Answer[]> {
      const run = async (guard: Guarding) => {
        const outer = outerPoints
          ? await backend.open({ limiters: { outer: { points: outerPoints } } })
          : undefined
        const app = appWith(guard, await backend.open({ limiters: limits }), outer)
        const answers: Answer[] = []
        for (const [path, init] of requests) answers.push(await answer(app, path, init))
        return answers
      }
      const before = await run(layered)
      const after = await run(guarded)
      expect(after).toEqual(before)
      return after
    }

    it('answers a valid key as the five middlewares did: JSON, ETag, 304, headers', async () => {
      const [first, again] = await bothAnswer({ api: { points: 10 } }, [
        ['/api/v1/records/1', bearer(keys.all)],
        ['/api/v1/records/1', bearer(keys.all)],
      ])
      expect(first?.status).toBe(200)
      expect(JSON.parse(first?.body ?? '')).toEqual({ data: { id: '1', key: 'all' } })
      expect(first?.headers).toMatchObject({
        'cache-control': 'private, no-cache',
        vary: 'Authorization',
        'ratelimit-limit': '10',
        'ratelimit-remaining': '9',
      })
      expect(first?.headers.etag).toMatch(/^"[\w-]{27}"$/)
      expect(again?.headers['ratelimit-remaining']).toBe('8')
      const tag = first?.headers.etag ?? ''
      const [notModified] = await bothAnswer({ api: { points: 10 } }, [
        ['/api/v1/records/1', bearer(keys.all, { 'if-none-match': tag })],
      ])
      expect(notModified?.status).toBe(304)
      expect(notModified?.body).toBe('')
      expect(notModified?.headers.etag).toBe(tag)
      expect(notModified?.headers['ratelimit-remaining']).toBe('9')
    })

    it('answers text, raw responses, 404, 403 from a route, 413 and JSON bodies alike', async () => {
      const post = (body: string): RequestInit => ({
        ...bearer(keys.all, { 'content-type': 'application/json' }),
        method: 'POST',
        body,
      })
      const answers = await bothAnswer({ api: { points: 10 } }, [
        ['/api/v1/text', bearer(keys.all)],
        ['/api/v1/raw', bearer(keys.all)],
        ['/api/v1/records/404', bearer(keys.all)],
        ['/api/v1/records/1', { ...bearer(keys.reader), method: 'DELETE' }],
        ['/api/v1/records', post(JSON.stringify({ a: 1 }))],
        ['/api/v1/records', post(JSON.stringify({ a: 'x'.repeat(MAX_BYTES) }))],
        ['/api/v1/nowhere', bearer(keys.all)],
      ])
      expect(answers.map((a) => a.status)).toEqual([200, 200, 404, 403, 201, 413, 404])
      expect(answers[0]?.headers).toMatchObject({
        'x-handler': 'yes',
        'cache-control': 'private, no-cache',
        'ratelimit-remaining': '9',
      })
      expect(answers[1]?.headers).toMatchObject({ 'x-raw': '1', 'ratelimit-remaining': '8' })
      // Every request with a valid key counted once, whatever it answered.
      expect(answers.map((a) => a.headers['ratelimit-remaining'])).toEqual([
        '9',
        '8',
        '7',
        '6',
        '5',
        '4',
        '3',
      ])
    })

    it('refuses a spent key with 429 and Retry-After, and the headers of the tightest limit', async () => {
      const answers = await bothAnswer({ api: { points: 2 } }, [
        ['/api/v1/records/1', bearer(keys.all)],
        ['/api/v1/records/1', bearer(keys.all)],
        ['/api/v1/records/1', bearer(keys.all)],
      ])
      expect(answers.map((a) => a.status)).toEqual([200, 200, 429])
      expect(JSON.parse(answers[2]?.body ?? '')).toEqual({
        error: 'Too Many Requests',
        code: 'too_many_requests',
      })
      expect(answers[2]?.headers).toMatchObject({
        'retry-after': 'seconds',
        'ratelimit-remaining': '0',
        'cache-control': 'private, no-cache',
      })
      // An app-wide throttle with fewer requests left names its own numbers.
      const tight = await bothAnswer(
        { api: { points: 10 } },
        [
          ['/api/v1/records/1', bearer(keys.all)],
          ['/api/v1/text', bearer(keys.all)],
        ],
        3,
      )
      expect(tight.map((a) => a.headers['ratelimit-limit'])).toEqual(['3', '3'])
      expect(tight.map((a) => a.headers['ratelimit-remaining'])).toEqual(['2', '1'])
    })

    it('counts refused keys without a key (per IP) and answers 429 once that bucket is spent', async () => {
      const limiters = await backend.open({ limiters: { api: { points: 2 } } })
      const app = appWith(guarded, limiters)
      const refused = await answer(app, '/api/v1/records/1', bearer('kiln_nope'))
      expect(refused.status).toBe(401)
      expect(JSON.parse(refused.body)).toEqual({
        error: 'Unauthenticated',
        code: 'unauthenticated',
      })
      // Counted, and saying so, as every answer of a throttled route does.
      expect(refused.headers).toMatchObject({
        'www-authenticate': 'Bearer',
        'ratelimit-limit': '2',
        'ratelimit-remaining': '1',
        'cache-control': 'private, no-cache',
      })
      expect((await answer(app, '/api/v1/records/1')).status).toBe(401)
      const spent = await answer(app, '/api/v1/records/1', bearer('kiln_nope'))
      expect(spent.status).toBe(429)
      expect(spent.headers).toMatchObject({ 'retry-after': 'seconds', 'ratelimit-remaining': '0' })
      // The same client with a valid key: the same per-IP bucket (the built-in rule), spent.
      expect((await answer(app, '/api/v1/records/1', bearer(keys.all))).status).toBe(429)
    })

    it('counts a burst of bad keys before checking them: 429 past the bucket, no key check (issue #39)', async () => {
      for (const stages of ['apiGuard', 'twoStageThrottle'] as const) {
        const limiters = await backend.open({ limiters: { api: { points: 3 } } })
        let checks = 0
        const slowStore = {
          async verifyKey(raw: string) {
            checks++
            // A key store that takes its time, as a database does: the burst arrives meanwhile.
            await new Promise((resolve) => setTimeout(resolve, 30))
            return provider.verifyKey(raw)
          },
        }
        const group = new Hono<ApiEnv>().onError(errorHandler({ logger: captureLog().logger }))
        if (stages === 'apiGuard') group.use(apiGuard({ apiKeys: slowStore, limiters }))
        else {
          const limit = twoStageThrottle(limiters, 'api')
          group
            .use(limit.beforeAuth)
            .use(apiKeyAuth({ provider: slowStore }))
            .use(limit.afterAuth)
        }
        group.get('/x', (c) => c.text('ok'))
        const burst = await Promise.all(
          Array.from({ length: 10 }, () => group.request('/x', bearer('kiln_nope'))),
        )
        const statuses = burst.map((res) => res.status).sort()
        expect(statuses, stages).toEqual([401, 401, 401, 429, 429, 429, 429, 429, 429, 429])
        expect(checks, stages).toBe(3)
        for (const res of burst) expect(res.headers.get('ratelimit-limit')).toBe('3')
      }
    })

    it('with buckets per key, a burst of bad keys meets 429 while a valid key from that address does not', async () => {
      const limiters = await backend.open({
        limiters: {
          api: (r) => (r.apiKey ? { key: `key:${r.apiKey.id}`, points: 5 } : perIp(r, 3)),
        },
      })
      const app = appWith(guarded, limiters)
      const burst = await Promise.all(
        Array.from({ length: 8 }, () => app.request('/api/v1/records/1', bearer('kiln_nope'))),
      )
      expect(burst.map((res) => res.status).sort()).toEqual([
        401, 401, 401, 429, 429, 429, 429, 429,
      ])
      const valid = await app.request('/api/v1/records/1', bearer(keys.all))
      expect(valid.status).toBe(200)
      expect(valid.headers.get('ratelimit-remaining')).toBe('4')
    })

    it('lets a per-key limiter see the key, while refused keys are limited per IP', async () => {
      const limiters = await backend.open({
        limiters: {
          api: (r) => (r.apiKey ? { key: `key:${r.apiKey.id}`, points: 2 } : perIp(r, 1)),
        },
      })
      const app = appWith(guarded, limiters)
      const statuses = async (key: string, times: number) => {
        const result: number[] = []
        for (let i = 0; i < times; i++) {
          result.push((await answer(app, '/api/v1/records/1', bearer(key))).status)
        }
        return result
      }
      expect(await statuses(keys.all ?? '', 3)).toEqual([200, 200, 429])
      expect(await statuses(keys.other ?? '', 3)).toEqual([200, 200, 429])
      expect(await statuses('kiln_nope', 2)).toEqual([401, 429])
    })

    it('does not count a key refused for a missing scope', async () => {
      const limiters = await backend.open({ limiters: { api: { points: 5 } } })
      const app = new Hono<ApiEnv>()
        .basePath('/api/v1')
        .onError(errorHandler({ logger: captureLog().logger }))
        .use(apiGuard({ apiKeys: provider, limiters, scopes: ['posts:write'] }))
        .get('/x', (c) => c.text('ok'))
      const forbidden = await app.request('/api/v1/x', bearer(keys.reader))
      expect(forbidden.status).toBe(403)
      expect(
        (await app.request('/api/v1/x', bearer(keys.all))).headers.get('RateLimit-Remaining'),
      ).toBe('4')
    })
  })
}

describe('apiGuard configuration', () => {
  it('fails at start-up on what would fail every request', () => {
    const limiters = createRateLimiters()
    expect(() => apiGuard({ apiKeys: provider, limiters, limiter: 'missing' })).toThrow(
      /no rate limiter named "missing"/,
    )
    expect(() => apiGuard({ apiKeys: {} as DatabaseApiKeyProvider, limiters })).toThrow(
      /apiGuard: `provider` must implement verifyKey/,
    )
    expect(() => apiGuard({ apiKeys: provider, limiters, maxBodyBytes: -1 })).toThrow(
      /apiGuard: maxBytes/,
    )
    expect(() => apiGuard({ apiKeys: provider, limiters, scopes: ['bad scope'] })).toThrow(
      /apiGuard: invalid scope/,
    )
    expect(() => apiGuard({ apiKeys: provider, limiters: {} as RateLimiters })).toThrow(
      /createRateLimiters/,
    )
  })
})
