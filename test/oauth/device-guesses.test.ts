import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRateLimiters, type RateLimiters } from '../../src/core/index.ts'
import { redisUrl } from '../support/env.ts'
import { createTestRedis, type TestRedis } from '../support/redis.ts'
import { createHarness, form, formWithCookie, hiddenField, registerClient } from './support.ts'

let testRedis: TestRedis | undefined
beforeAll(async () => {
  if (redisUrl) testRedis = await createTestRedis()
})
afterAll(async () => {
  await testRedis?.cleanup()
})

let unique = 0
const limiterBackends: { name: string; available: boolean; open(): Promise<RateLimiters> }[] = [
  { name: 'memory', available: true, open: async () => createRateLimiters() },
  {
    name: 'redis',
    available: redisUrl !== undefined,
    open: async () => {
      if (!testRedis) throw new Error('no Redis')
      const redis = testRedis.connections.connect({ name: 'device-guesses' })
      await redis.ping()
      return createRateLimiters({ redis, prefix: `${testRedis.prefix}:rl:${unique++}` })
    },
  },
]

for (const backend of limiterBackends) {
  describe.skipIf(!backend.available)(
    `POST /device under concurrent guesses [${backend.name}]`,
    () => {
      it('lets exactly the limit of 200 concurrent wrong codes be checked', async () => {
        const harness = createHarness({ rateLimiters: await backend.open() })
        const cookie = harness.sessions.login('alice')
        const entry = await harness.request('/device', { headers: { cookie } })
        const csrf = hiddenField(await entry.text(), 'csrf_token')
        const guesses = await Promise.all(
          Array.from({ length: 200 }, (_, i) =>
            harness.request(
              '/device',
              formWithCookie(cookie, {
                user_code: `BCDF-${String.fromCharCode(66 + (i % 20)).repeat(4)}`,
                csrf_token: csrf,
              }),
            ),
          ),
        )
        const statuses = guesses.map((answer) => answer.status)
        // The default limit: 10 wrong codes per signed-in user.
        expect(statuses.filter((status) => status === 400)).toHaveLength(10)
        expect(statuses.filter((status) => status === 429)).toHaveLength(190)
      })

      it('does not count right codes against the person', async () => {
        const harness = createHarness({
          rateLimiters: await backend.open(),
          userCodeLimits: { perSession: { max: 2, windowMs: 60_000 } },
        })
        const client = await registerClient(harness)
        const cookie = harness.sessions.login('bob')
        const entry = await harness.request('/device', { headers: { cookie } })
        const csrf = hiddenField(await entry.text(), 'csrf_token')
        for (let i = 0; i < 4; i++) {
          const started = await harness.request(
            '/device_authorization',
            form({ client_id: client.client_id }),
          )
          const { user_code } = (await started.json()) as { user_code: string }
          const confirm = await harness.request(
            '/device',
            formWithCookie(cookie, { user_code, csrf_token: csrf }),
          )
          expect(confirm.status).toBe(200)
        }
      })
    },
  )
}
