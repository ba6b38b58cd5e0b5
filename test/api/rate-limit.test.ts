import { type AddressInfo, createServer } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  type ApiEnv,
  apiKeyAuth,
  createApiKey,
  createDatabaseApiKeyProvider,
  type DatabaseApiKeyProvider,
} from '../../src/api/index.ts'
import { addressKey, normalizeAddress } from '../../src/core/http/client-ip.ts'
import {
  createRateLimiters,
  type LimiterDefinition,
  perIp,
  type RateLimiters,
} from '../../src/core/http/rate-limiters.ts'
import { throttle } from '../../src/core/http/throttle.ts'
import { errorHandler, RedisConnections } from '../../src/core/index.ts'
import { createDatabase, type Database, migrate } from '../../src/db/index.ts'
import { redisUrl } from '../support/env.ts'
import { createTestRedis, type TestRedis } from '../support/redis.ts'
import { captureLog } from './support.ts'

interface Store {
  name: 'memory' | 'redis'
  available: boolean
  /** Limiters on this store; calling it twice with one prefix gives two "instances". */
  open(options: Parameters<typeof createRateLimiters>[0]): Promise<RateLimiters>
}

const stores: Store[] = [
  { name: 'memory', available: true, open: async (options) => createRateLimiters(options) },
  {
    name: 'redis',
    available: redisUrl !== undefined,
    open: async (options) => {
      if (!testRedis) throw new Error('no Redis')
      const redis = testRedis.connections.connect({ name: 'limiter' })
      // As SharedState does at start-up: until the client is ready, limits are counted in memory.
      await redis.ping()
      return createRateLimiters({ prefix: testRedis.prefix, ...options, redis })
    },
  },
]

let testRedis: TestRedis | undefined
beforeAll(async () => {
  if (redisUrl) testRedis = await createTestRedis()
})
afterAll(async () => {
  await testRedis?.cleanup()
})

function appWith(limiters: RateLimiters, name = 'api') {
  const app = new Hono()
  app.onError(errorHandler({ logger: captureLog().logger }))
  app.use('*', throttle(limiters, name))
  app.get('/records/1', (c) => c.json({ data: { id: 1 } }))
  app.get('/raw', () => new Response('raw body'))
  return app
}

let unique = 0
/** A fresh prefix per test so Redis counters never carry over. */
const fresh = () => `t${Date.now().toString(36)}${unique++}`

for (const store of stores) {
  describe.skipIf(!store.available)(`rate limiting [${store.name}]`, () => {
    let prefix: string
    beforeEach(() => {
      prefix = `${testRedis?.prefix ?? 'kiln'}:${fresh()}`
    })

    it('api: 60 requests per minute per client, with RateLimit-* headers on each', async () => {
      const app = appWith(await store.open({ prefix }))
      for (let i = 1; i <= 60; i++) {
        const response = await app.request('/records/1')
        expect(response.status).toBe(200)
        expect(response.headers.get('RateLimit-Limit')).toBe('60')
        expect(response.headers.get('RateLimit-Remaining')).toBe(String(60 - i))
        const reset = Number(response.headers.get('RateLimit-Reset'))
        expect(reset).toBeGreaterThan(0)
        expect(reset).toBeLessThanOrEqual(60)
      }
      const refused = await app.request('/records/1')
      expect(refused.status).toBe(429)
      expect(await refused.json()).toEqual({
        error: 'Too Many Requests',
        code: 'too_many_requests',
      })
      const retryAfter = Number(refused.headers.get('Retry-After'))
      expect(retryAfter).toBeGreaterThanOrEqual(1)
      expect(retryAfter).toBeLessThanOrEqual(60)
      expect(refused.headers.get('RateLimit-Limit')).toBe('60')
      expect(refused.headers.get('RateLimit-Remaining')).toBe('0')
      expect(refused.headers.get('RateLimit-Reset')).toBe(String(retryAfter))
    })

    it('puts the headers on responses a handler builds itself', async () => {
      const app = appWith(await store.open({ prefix }))
      const response = await app.request('/raw')
      expect(await response.text()).toBe('raw body')
      expect(response.headers.get('RateLimit-Remaining')).toBe('59')
    })

    it('puts the headers on 404s and on 401s from apiKeyAuth behind it', async () => {
      const app = appWith(await store.open({ prefix }))
      expect((await app.request('/nowhere')).headers.get('RateLimit-Limit')).toBe('60')
      const secured = new Hono<ApiEnv>()
      secured.onError(errorHandler({ logger: captureLog().logger }))
      secured.use('*', throttle(await store.open({ prefix: `${prefix}:b` }), 'api'))
      secured.use(
        '*',
        apiKeyAuth({ provider: { verifyKey: async () => ({ id: 1, name: 'x', scopes: [] }) } }),
      )
      secured.get('/x', (c) => c.text('ok'))
      const refused = await secured.request('/x')
      expect(refused.status).toBe(401)
      expect(refused.headers.get('RateLimit-Remaining')).toBe('59')
    })

    it('starts a new window when the old one ends', async () => {
      const app = appWith(
        await store.open({ prefix, limiters: { api: { points: 2, durationSeconds: 1 } } }),
      )
      expect((await app.request('/records/1')).status).toBe(200)
      expect((await app.request('/records/1')).status).toBe(200)
      const refused = await app.request('/records/1')
      expect(refused.status).toBe(429)
      expect(refused.headers.get('Retry-After')).toBe('1')
      await new Promise((resolve) => setTimeout(resolve, 1_100))
      const again = await app.request('/records/1')
      expect(again.status).toBe(200)
      expect(again.headers.get('RateLimit-Remaining')).toBe('1')
    })

    it('without a socket and without trustProxy, every request shares one bucket: X-Forwarded-For is ignored', async () => {
      const app = appWith(await store.open({ prefix, limiters: { api: { points: 3 } } }))
      for (const ip of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) {
        expect(
          (await app.request('/records/1', { headers: { 'X-Forwarded-For': ip } })).status,
        ).toBe(200)
      }
      const spoofed = await app.request('/records/1', {
        headers: { 'X-Forwarded-For': '10.9.9.9' },
      })
      expect(spoofed.status).toBe(429)
    })

    it('with trustProxy, counts each client named by the proxy separately, ignoring forged entries', async () => {
      const app = appWith(
        await store.open({ prefix, trustProxy: true, limiters: { api: { points: 1 } } }),
      )
      const from = (xff: string) =>
        app.request('/records/1', { headers: { 'X-Forwarded-For': xff } })
      expect((await from('203.0.113.7')).status).toBe(200)
      expect((await from('203.0.113.8')).status).toBe(200)
      // The client forges a left-hand entry; the proxy appended the real address on the right.
      expect((await from('198.51.100.1, 203.0.113.7')).status).toBe(429)
      expect((await from('::ffff:203.0.113.8')).status).toBe(429)
    })

    it('with trustProxy: 2, takes the second address from the right', async () => {
      const app = appWith(
        await store.open({ prefix, trustProxy: 2, limiters: { api: { points: 1 } } }),
      )
      const from = (xff: string) =>
        app.request('/records/1', { headers: { 'X-Forwarded-For': xff } })
      expect((await from('1.1.1.1, 203.0.113.7, 10.0.0.1')).status).toBe(200)
      expect((await from('2.2.2.2, 203.0.113.7, 10.0.0.2')).status).toBe(429)
      expect((await from('203.0.113.9, 10.0.0.1')).status).toBe(200)
    })

    it('with trustProxy, an unparseable X-Forwarded-For falls back to the socket (shared bucket here)', async () => {
      const app = appWith(
        await store.open({ prefix, trustProxy: true, limiters: { api: { points: 1 } } }),
      )
      expect(
        (await app.request('/records/1', { headers: { 'X-Forwarded-For': 'garbage' } })).status,
      ).toBe(200)
      expect(
        (await app.request('/records/1', { headers: { 'X-Forwarded-For': 'other' } })).status,
      ).toBe(429)
    })

    it('reads the client address from the socket of a real server', async () => {
      const limiters = await store.open({ prefix, limiters: { api: { points: 1 } } })
      const app = appWith(limiters)
      const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 })
      await new Promise((resolve) => server.once('listening', resolve))
      const { port } = server.address() as AddressInfo
      try {
        const first = await fetch(`http://127.0.0.1:${port}/records/1`)
        expect(first.status).toBe(200)
        // The header cannot buy a second bucket without trustProxy.
        const second = await fetch(`http://127.0.0.1:${port}/records/1`, {
          headers: { 'X-Forwarded-For': '203.0.113.50' },
        })
        expect(second.status).toBe(429)
        // In-process requests (no socket) are a different bucket from 127.0.0.1.
        expect((await app.request('/records/1')).status).toBe(200)
      } finally {
        await new Promise((resolve) => server.close(resolve))
      }
    })

    it('segments by key:<id> with its own limit when a key is present', async () => {
      const byKey: LimiterDefinition = (request) =>
        request.apiKey ? { key: `key:${request.apiKey.id}`, points: 3 } : perIp(request, 1)
      const limiters = await store.open({ prefix, limiters: { api: byKey } })
      const app = new Hono<ApiEnv>()
      app.onError(errorHandler({ logger: captureLog().logger }))
      const keys: Record<string, { id: number; name: string; scopes: string[] }> = {
        a: { id: 1, name: 'a', scopes: [] },
        b: { id: 2, name: 'b', scopes: [] },
      }
      app.use('/keyed/*', apiKeyAuth({ provider: { verifyKey: async (raw) => keys[raw]! } }))
      app.use('*', throttle(limiters, 'api'))
      app.get('/keyed/x', (c) => c.text('ok'))
      app.get('/open', (c) => c.text('ok'))
      const as = (key: string) =>
        app.request('/keyed/x', { headers: { Authorization: `Bearer ${key}` } })
      for (let i = 0; i < 3; i++) expect((await as('a')).status).toBe(200)
      const refused = await as('a')
      expect(refused.status).toBe(429)
      expect(refused.headers.get('RateLimit-Limit')).toBe('3')
      expect((await as('b')).status).toBe(200)
      expect((await app.request('/open')).status).toBe(200)
      expect((await app.request('/open')).status).toBe(429)
    })

    it('reports the tightest of several throttles in the headers', async () => {
      const limiters = await store.open({
        prefix,
        limiters: { api: { points: 10 }, strict: { points: 2 } },
      })
      const app = new Hono()
      app.onError(errorHandler({ logger: captureLog().logger }))
      app.use('*', throttle(limiters, 'api'))
      app.use('*', throttle(limiters, 'strict'))
      app.get('/x', (c) => c.text('ok'))
      const response = await app.request('/x')
      expect(response.headers.get('RateLimit-Limit')).toBe('2')
      expect(response.headers.get('RateLimit-Remaining')).toBe('1')
    })
  })
}

describe.skipIf(redisUrl === undefined)('rate limiting on Redis across instances', () => {
  it('keeps one count for all instances', async () => {
    const prefix = `${testRedis!.prefix}:${fresh()}`
    const one = appWith(await stores[1]!.open({ prefix, limiters: { api: { points: 4 } } }))
    const two = appWith(await stores[1]!.open({ prefix, limiters: { api: { points: 4 } } }))
    expect((await one.request('/records/1')).status).toBe(200)
    expect((await two.request('/records/1')).status).toBe(200)
    expect((await one.request('/records/1')).status).toBe(200)
    const last = await two.request('/records/1')
    expect(last.headers.get('RateLimit-Remaining')).toBe('0')
    expect((await one.request('/records/1')).status).toBe(429)
    expect((await two.request('/records/1')).status).toBe(429)
  })

  it('keeps enforcing limits in memory when Redis is unreachable, and says so once', async () => {
    // A port nothing listens on: the connection is refused at once.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo
        probe.close(() => resolve(port))
      })
    })
    const connections = new RedisConnections(`redis://127.0.0.1:${port}`)
    const log = captureLog()
    const limiters = createRateLimiters({
      redis: connections.connect(),
      logger: log.logger,
      limiters: { api: { points: 2 } },
    })
    expect(limiters.kind).toBe('redis')
    const app = appWith(limiters)
    try {
      const first = await app.request('/records/1')
      expect(first.status).toBe(200)
      expect(first.headers.get('RateLimit-Remaining')).toBe('1')
      expect((await app.request('/records/1')).status).toBe(200)
      expect((await app.request('/records/1')).status).toBe(429)
      const warnings = log.entries().filter((e) => e.level === 40)
      expect(warnings).toHaveLength(1)
      expect(String(warnings[0]?.msg)).toContain('cannot reach Redis')
    } finally {
      await connections.close()
    }
  })
})

describe('rate limiter configuration', () => {
  it('fails at start-up on bad definitions and unknown names', () => {
    expect(() => createRateLimiters({ limiters: { api: { points: 0 } } })).toThrow(TypeError)
    expect(() => createRateLimiters({ limiters: { api: { points: 1.5 } } })).toThrow(TypeError)
    expect(() =>
      createRateLimiters({ limiters: { api: { points: 5, durationSeconds: 0 } } }),
    ).toThrow(TypeError)
    expect(() => createRateLimiters({ limiters: { 'bad name': { points: 5 } } })).toThrow(TypeError)
    expect(() => createRateLimiters({ trustProxy: -1 })).toThrow(TypeError)
    const limiters = createRateLimiters()
    expect(limiters.names()).toEqual(['api'])
    expect(() => throttle(limiters, 'nope')).toThrow('no rate limiter named "nope" (defined: api)')
  })

  it('answers 500 (logged) when an app-defined rule is invalid at request time', async () => {
    const log = captureLog()
    const limiters = createRateLimiters({ limiters: { api: () => ({ key: '', points: 1 }) } })
    const app = new Hono()
    app.onError(errorHandler({ logger: log.logger }))
    app.use('*', throttle(limiters, 'api'))
    app.get('/x', (c) => c.text('ok'))
    expect((await app.request('/x')).status).toBe(500)
    expect(log.text()).toContain('a rule needs a non-empty key')
  })
})

describe('client addresses', () => {
  it('normalizes addresses and refuses garbage', () => {
    expect(normalizeAddress('::ffff:127.0.0.1')).toBe('127.0.0.1')
    expect(normalizeAddress('[2001:DB8::1]')).toBe('2001:db8::1')
    expect(normalizeAddress('fe80::1%eth0')).toBe('fe80::1')
    expect(normalizeAddress('not-an-ip')).toBeUndefined()
    expect(normalizeAddress('')).toBeUndefined()
  })

  it('groups IPv6 clients by /64 and IPv4 by address', () => {
    expect(addressKey('203.0.113.7')).toBe('ip:203.0.113.7')
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('ip:2001:db8:1:2::/64')
    expect(addressKey('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('ip:2001:db8:1:2::/64')
    expect(addressKey('::1')).toBe('ip:0:0:0:0::/64')
    expect(addressKey('unknown')).toBe('ip:unknown')
  })
})

describe('throttle with a real key store', () => {
  let database: Database
  let provider: DatabaseApiKeyProvider
  beforeAll(async () => {
    database = await createDatabase('sqlite::memory:')
    await migrate(database, { logger: { info: () => {}, warn: () => {} } })
    provider = createDatabaseApiKeyProvider({ database })
  })
  afterAll(async () => {
    await provider.close()
    await database.close()
  })
  afterEach(() => {})

  it('limits unauthenticated floods before any key lookup when placed first', async () => {
    const limiters = createRateLimiters({ limiters: { api: { points: 2 } } })
    const app = new Hono<ApiEnv>()
    app.onError(errorHandler({ logger: captureLog().logger }))
    app.use('*', throttle(limiters, 'api'))
    app.use('*', apiKeyAuth({ provider }))
    app.get('/x', (c) => c.text('ok'))
    const created = await createApiKey(database, { name: 'ci' })
    expect(
      (await app.request('/x', { headers: { Authorization: `Bearer ${created.rawKey}` } })).status,
    ).toBe(200)
    expect((await app.request('/x', { headers: { Authorization: 'Bearer nope' } })).status).toBe(
      401,
    )
    expect(
      (await app.request('/x', { headers: { Authorization: `Bearer ${created.rawKey}` } })).status,
    ).toBe(429)
  })
})
