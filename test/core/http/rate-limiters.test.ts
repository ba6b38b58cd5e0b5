import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createRateLimiters,
  errorHandler,
  type LimitRequest,
  perIpAndSubject,
  type RateLimiters,
  silentLogger,
  throttle,
} from '../../../src/core/index.ts'
import { redisUrl } from '../../support/env.ts'
import { createTestRedis, type TestRedis } from '../../support/redis.ts'

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
