import { afterEach, describe, expect, it } from 'vitest'
import { createSharedState, type PubSub, type SharedState } from '../../src/core/index.ts'
import { redisUrl } from '../support/env.ts'
import { createTestRedis, type TestRedis } from '../support/redis.ts'

const opened: Array<SharedState | TestRedis> = []
afterEach(async () => {
  for (const state of opened.splice(0).reverse()) {
    if ('cleanup' in state) await state.cleanup()
    else await state.close()
  }
})

/** Two instances' shared state: one process's memory twice, or two connections to Redis. */
const backends: Array<{ name: string; skip: boolean; open(): Promise<[PubSub, PubSub]> }> = [
  {
    name: 'memory',
    skip: false,
    async open() {
      const state = await createSharedState({})
      opened.push(state)
      return [state.pubsub, state.pubsub]
    },
  },
  {
    name: 'redis',
    skip: redisUrl === undefined,
    async open() {
      const redis = await createTestRedis()
      opened.push(redis)
      const a = await createSharedState({ redisUrl, prefix: redis.prefix })
      const b = await createSharedState({ redisUrl, prefix: redis.prefix })
      opened.push(a, b)
      return [a.pubsub, b.pubsub]
    },
  },
]

for (const backend of backends) {
  describe.skipIf(backend.skip)(`SharedState.pubsub on ${backend.name}`, () => {
    it('delivers what one instance publishes to the other, on that channel only, while subscribed', async () => {
      const [one, other] = await backend.open()
      const got: string[] = []
      const elsewhere: string[] = []
      const unsubscribe = await other.subscribe('answers:a', (message) => got.push(message))
      const unrelated = await other.subscribe('answers:b', (message) => elsewhere.push(message))
      expect(await one.publish('answers:a', 'first')).toBe(1)
      await expect.poll(() => got).toEqual(['first'])
      await unsubscribe()
      expect(await one.publish('answers:a', 'second')).toBe(0)
      expect(await one.publish('answers:nobody', 'third')).toBe(0)
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(got).toEqual(['first'])
      expect(elsewhere).toEqual([])
      await unrelated()
    })

    it('keeps a channel while one of its subscriptions remains; a failing listener stops no other', async () => {
      const [one, other] = await backend.open()
      const got: string[] = []
      const failing = await other.subscribe('c', () => {
        throw new Error('listener failed')
      })
      const first = await other.subscribe('c', (message) => got.push(`1:${message}`))
      const second = await other.subscribe('c', (message) => got.push(`2:${message}`))
      await first()
      await one.publish('c', 'x')
      await expect.poll(() => got).toEqual(['2:x'])
      await second()
      await failing()
    })
  })
}
