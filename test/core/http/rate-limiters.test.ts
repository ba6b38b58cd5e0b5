import { Hono } from 'hono'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MemoryWindows } from '../../../src/core/http/memory-windows.ts'
import { perIpAndSubject } from '../../../src/core/http/rate-limiters.ts'
import {
  createRateLimiters,
  errorHandler,
  keyDigest,
  type LimitRequest,
  type RateLimiters,
  silentLogger,
  throttle,
} from '../../../src/core/index.ts'
import { redisUrl } from '../../support/env.ts'
import { createTestRedis, type TestRedis } from '../../support/redis.ts'
import { countSocketWrites } from '../../support/sockets.ts'

let testRedis: TestRedis | undefined
beforeAll(async () => {
  if (redisUrl) testRedis = await createTestRedis()
})
afterAll(async () => {
  await testRedis?.cleanup()
})

let unique = 0
const backends: { name: string; available: boolean; open(): Promise<RateLimiters> }[] = [
  { name: 'memory', available: true, open: async () => createRateLimiters() },
  {
    name: 'redis',
    available: redisUrl !== undefined,
    open: async () => {
      if (!testRedis) throw new Error('no Redis')
      const redis = testRedis.connections.connect({ name: 'limiter' })
      await redis.ping()
      return createRateLimiters({ redis, prefix: `${testRedis.prefix}:${unique++}` })
    },
  },
]

const request = (ip: string, subject?: string): LimitRequest => ({
  ip,
  apiKey: undefined,
  method: 'POST',
  path: '/login',
  subject,
})

for (const backend of backends) {
  describe.skipIf(!backend.available)(
    `rate limiters: define, peek, reset [${backend.name}]`,
    () => {
      it('define adds a limiter unless the app already has one of that name', async () => {
        const limiters = createRateLimiters({ limiters: { login: { points: 2 } } })
        limiters.define('login', { points: 50 })
        limiters.define('oauth-register', { points: 20, durationSeconds: 3600 })
        expect(limiters.names()).toEqual(['api', 'login', 'oauth-register'])
        expect((await limiters.consume('login', request('1.2.3.4'))).limit).toBe(2)
        expect(() => limiters.define('bad name', { points: 1 })).toThrow(TypeError)
        expect(() => limiters.define('zero', { points: 0 })).toThrow(TypeError)
      })

      it('peek reads a bucket without counting; reset forgets it', async () => {
        const limiters = await backend.open()
        limiters.define('failures', (r) => perIpAndSubject(r, 2, 900))
        const attempt = request('1.2.3.4', 'Ann@Example.com')
        expect(await limiters.peek('failures', attempt)).toMatchObject({
          allowed: true,
          remaining: 2,
        })
        await limiters.consume('failures', attempt)
        await limiters.consume('failures', attempt)
        expect(await limiters.peek('failures', attempt)).toMatchObject({
          allowed: true,
          remaining: 0,
        })
        expect((await limiters.consume('failures', attempt)).allowed).toBe(false)
        // The same email from another address, or another email from this one: other buckets.
        expect(
          (await limiters.peek('failures', request('5.6.7.8', 'ann@example.com'))).remaining,
        ).toBe(2)
        expect(
          (await limiters.peek('failures', request('1.2.3.4', 'bob@example.com'))).remaining,
        ).toBe(2)
        await limiters.reset('failures', attempt)
        expect((await limiters.peek('failures', attempt)).remaining).toBe(2)
      })

      it('throttle answers 429 with Retry-After from a library-defined limiter', async () => {
        const limiters = await backend.open()
        limiters.define('tight', { points: 1 })
        const app = new Hono()
        app.onError(errorHandler({ logger: silentLogger() }))
        app.post('/x', throttle(limiters, 'tight'), (c) => c.text('ok'))
        expect((await app.request('/x', { method: 'POST' })).status).toBe(200)
        const refused = await app.request('/x', { method: 'POST' })
        expect(refused.status).toBe(429)
        expect(Number(refused.headers.get('Retry-After'))).toBeGreaterThan(0)
      })
    },
  )
}

describe('rate limiters in memory: fixed windows on an injected clock', () => {
  const clock = () => {
    let time = 1_700_000_000_000
    return { now: () => time, advance: (ms: number) => (time += ms) }
  }

  it('opens a window at the first request and a new one when it ends', async () => {
    const { now, advance } = clock()
    const limiters = createRateLimiters({ now, limiters: { api: { points: 2 } } })
    const from = request('1.2.3.4')
    expect(await limiters.consume('api', from)).toEqual({
      allowed: true,
      limit: 2,
      remaining: 1,
      resetSeconds: 60,
    })
    advance(30_500)
    expect(await limiters.consume('api', from)).toEqual({
      allowed: true,
      limit: 2,
      remaining: 0,
      resetSeconds: 30,
    })
    advance(29_000)
    // Refused requests are counted too; the window still ends when it began + 60 s.
    expect(await limiters.consume('api', from)).toEqual({
      allowed: false,
      limit: 2,
      remaining: 0,
      resetSeconds: 1,
    })
    advance(499)
    expect((await limiters.consume('api', from)).allowed).toBe(false)
    advance(1)
    expect(await limiters.consume('api', from)).toEqual({
      allowed: true,
      limit: 2,
      remaining: 1,
      resetSeconds: 60,
    })
  })

  it('keeps one window per bucket and per window length', async () => {
    const { now, advance } = clock()
    const limiters = createRateLimiters({
      now,
      limiters: { api: { points: 1 }, short: { points: 1, durationSeconds: 1 } },
    })
    expect((await limiters.consume('api', request('1.2.3.4'))).allowed).toBe(true)
    expect((await limiters.consume('api', request('5.6.7.8'))).allowed).toBe(true)
    expect((await limiters.consume('short', request('1.2.3.4'))).allowed).toBe(true)
    expect((await limiters.consume('api', request('1.2.3.4'))).allowed).toBe(false)
    advance(1_000)
    expect((await limiters.consume('short', request('1.2.3.4'))).allowed).toBe(true)
    expect((await limiters.consume('api', request('1.2.3.4'))).allowed).toBe(false)
  })

  it('peek after the window ended sees a full bucket and no reset', async () => {
    const { now, advance } = clock()
    const limiters = createRateLimiters({ now, limiters: { api: { points: 3 } } })
    await limiters.consume('api', request('1.2.3.4'))
    expect(await limiters.peek('api', request('1.2.3.4'))).toEqual({
      allowed: true,
      limit: 3,
      remaining: 2,
      resetSeconds: 60,
    })
    advance(60_000)
    expect(await limiters.peek('api', request('1.2.3.4'))).toEqual({
      allowed: true,
      limit: 3,
      remaining: 3,
      resetSeconds: 0,
    })
  })

  it('throttle counts RateLimit-Reset down and answers the next window', async () => {
    const { now, advance } = clock()
    const limiters = createRateLimiters({ now, limiters: { api: { points: 1 } } })
    const app = new Hono()
    app.onError(errorHandler({ logger: silentLogger() }))
    app.get('/x', throttle(limiters, 'api'), (c) => c.text('ok'))
    expect((await app.request('/x')).headers.get('RateLimit-Reset')).toBe('60')
    advance(45_000)
    const refused = await app.request('/x')
    expect(refused.status).toBe(429)
    expect(refused.headers.get('Retry-After')).toBe('15')
    expect(refused.headers.get('RateLimit-Reset')).toBe('15')
    advance(15_000)
    const again = await app.request('/x')
    expect(again.status).toBe(200)
    expect(again.headers.get('RateLimit-Remaining')).toBe('0')
    expect(again.headers.get('RateLimit-Reset')).toBe('60')
  })
})

describe('rate limiters while Redis is unreachable', () => {
  it('count in memory on the injected clock until Redis answers', async () => {
    // Never connected: every count falls back to this process's windows.
    const redis = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: 0 })
    let time = 1_700_000_000_000
    const limiters = createRateLimiters({
      redis,
      now: () => time,
      limiters: { api: { points: 1 } },
    })
    const from = request('1.2.3.4')
    expect((await limiters.consume('api', from)).allowed).toBe(true)
    expect(await limiters.consume('api', from)).toMatchObject({ allowed: false, resetSeconds: 60 })
    time += 60_000
    expect((await limiters.consume('api', from)).allowed).toBe(true)
    redis.disconnect()
  })
})

describe('MemoryWindows', () => {
  it('sweeps ended windows, so memory holds the buckets of about two windows', () => {
    let time = 0
    const windows = new MemoryWindows(1_000, () => time)
    for (let i = 0; i < 1_000; i++) windows.consume(`ip:10.0.${i >> 8}.${i & 255}`)
    expect(windows.size).toBe(1_000)
    // Ended, but not swept before the next sweep is due: still held, never counted.
    time = 999
    windows.consume('ip:10.9.9.9')
    expect(windows.size).toBe(1_001)
    expect(windows.get('ip:10.0.0.0')).toEqual({ count: 1, msLeft: 1 })
    time = 1_000
    expect(windows.get('ip:10.0.0.0')).toBeUndefined()
    windows.consume('ip:10.0.0.0')
    // The sweep ran: only the window still open (10.9.9.9) and the new one remain.
    expect(windows.size).toBe(2)
    expect(windows.get('ip:10.0.0.0')).toEqual({ count: 1, msLeft: 1_000 })
    expect(windows.get('ip:10.9.9.9')).toEqual({ count: 1, msLeft: 999 })
  })

  it('delete forgets a bucket', () => {
    const windows = new MemoryWindows(1_000, () => 0)
    windows.consume('a')
    windows.consume('a')
    windows.delete('a')
    expect(windows.get('a')).toBeUndefined()
    expect(windows.consume('a')).toEqual({ count: 1, msLeft: 1_000 })
  })
})

/** An `api` limiter of `points` per minute counted in the test Redis, under its own prefix. */
async function redisLimiters(name: string, points: number) {
  if (!testRedis) throw new Error('no Redis')
  const redis = testRedis.connections.connect({ name: 'limiter' })
  await redis.ping()
  const prefix = `${testRedis.prefix}:${name}`
  const limiters = createRateLimiters({ redis, prefix, limiters: { api: { points } } })
  return { redis, prefix, limiters }
}

describe.skipIf(redisUrl === undefined)('rate limiters on Redis: the stored windows', () => {
  it('keeps each bucket under <prefix>:<limiter>:<duration>:<digest of the bucket>, expiring with its window', async () => {
    const { redis, prefix, limiters } = await redisLimiters('stored', 5)
    await limiters.consume('api', request('1.2.3.4'))
    expect((await limiters.consume('api', request('1.2.3.4'))).remaining).toBe(3)
    const key = `${prefix}:api:60:${keyDigest('ip:1.2.3.4')}`
    expect(await redis.keys(`${prefix}:*`)).toEqual([key])
    expect(await redis.get(key)).toBe('2')
    const ttl = await redis.pttl(key)
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(60_000)
    await limiters.reset('api', request('1.2.3.4'))
    expect(await redis.exists(key)).toBe(0)
    expect(await limiters.peek('api', request('1.2.3.4'))).toEqual({
      allowed: true,
      limit: 5,
      remaining: 5,
      resetSeconds: 0,
    })
  })
})

describe.skipIf(redisUrl === undefined)('rate limiters on Redis: counts made together', () => {
  it('leave in one socket write, and each request gets its own count', async () => {
    const { redis, prefix, limiters } = await redisLimiters('together', 100)
    await limiters.consume('api', request('5.6.7.8')) // loads the script into Redis
    const counter = countSocketWrites(redis.stream)
    const counts = await Promise.all(
      Array.from({ length: 10 }, () => limiters.consume('api', request('5.6.7.8'))),
    )
    counter.restore()
    expect(counter.writes).toBe(1)
    expect(counts.map((count) => count.remaining).sort((a, b) => b - a)).toEqual([
      98, 97, 96, 95, 94, 93, 92, 91, 90, 89,
    ])
    expect(await redis.get(`${prefix}:api:60:${keyDigest('ip:5.6.7.8')}`)).toBe('11')
    // A lone count is not held back: it leaves when the loop turns.
    expect((await limiters.consume('api', request('5.6.7.8'))).remaining).toBe(88)
  })
})

for (const backend of backends) {
  describe.skipIf(!backend.available)(`rate limiters: consume is atomic [${backend.name}]`, () => {
    it('allows exactly the limit of 200 concurrent requests', async () => {
      const limiters = await backend.open()
      limiters.define('guesses', { points: 10, durationSeconds: 900 })
      const results = await Promise.all(
        Array.from({ length: 200 }, () => limiters.consume('guesses', request('198.51.100.4'))),
      )
      expect(results.filter((result) => result.allowed)).toHaveLength(10)
    })

    it('refund takes back one count, never below zero, and leaves other buckets alone', async () => {
      const limiters = await backend.open()
      limiters.define('codes', { points: 2, durationSeconds: 900 })
      const mine = request('198.51.100.5')
      await limiters.refund('codes', mine)
      expect((await limiters.peek('codes', mine)).remaining).toBe(2)
      await limiters.consume('codes', mine)
      await limiters.consume('codes', mine)
      await limiters.consume('codes', request('198.51.100.6'))
      await limiters.refund('codes', mine)
      expect((await limiters.peek('codes', mine)).remaining).toBe(1)
      expect((await limiters.peek('codes', request('198.51.100.6'))).remaining).toBe(1)
      await limiters.refund('codes', mine)
      await limiters.refund('codes', mine)
      expect((await limiters.consume('codes', mine)).remaining).toBe(1)
    })
  })
}
