import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ManualClock, MemoryKeyValueStore, RedisKeyValueStore } from '../../src/core/index.ts'
import { DEDUP_TTL_MS } from '../../src/messaging/dedup.ts'
import {
  type DeduplicationStore,
  KeyValueDeduplicationStore,
  MemoryDeduplicationStore,
} from '../../src/messaging/index.ts'
import { createTestRedis, describeWithRedis, type TestRedis } from '../support/redis.ts'
import { readyClient } from './support.ts'

/** The DeduplicationStore contract, run on every implementation. */
function contract(
  make: () => Promise<{ store: DeduplicationStore; expire?: () => Promise<void> }>,
) {
  it('reports an id as seen only from the second time on', async () => {
    const { store } = await make()
    expect(await store.checkAndInsert('wamid.A')).toBe(false)
    expect(await store.checkAndInsert('wamid.A')).toBe(true)
    expect(await store.checkAndInsert('wamid.B')).toBe(false)
  })

  it('is atomic: of many concurrent inserts of one id exactly one is new', async () => {
    const { store } = await make()
    const results = await Promise.all(
      Array.from({ length: 50 }, () => store.checkAndInsert('wamid.C')),
    )
    expect(results.filter((seen) => !seen)).toHaveLength(1)
  })

  it('release forgets an id', async () => {
    const { store } = await make()
    await store.checkAndInsert('wamid.D')
    await store.release('wamid.D')
    expect(await store.checkAndInsert('wamid.D')).toBe(false)
    expect(await store.checkAndInsert('wamid.D')).toBe(true)
  })

  it('forgets an id after its lifetime', async () => {
    const { store, expire } = await make()
    if (!expire) return
    await store.checkAndInsert('wamid.E')
    await expire()
    expect(await store.checkAndInsert('wamid.E')).toBe(false)
  })
}

describe('MemoryDeduplicationStore', () => {
  let clock: ManualClock
  contract(async () => {
    clock = new ManualClock()
    const store = new MemoryDeduplicationStore({ clock })
    return { store, expire: async () => clock.advance(DEDUP_TTL_MS) }
  })

  it('keeps ids for 5 minutes, not a millisecond less', async () => {
    const clock = new ManualClock()
    const store = new MemoryDeduplicationStore({ clock })
    expect(DEDUP_TTL_MS).toBe(5 * 60 * 1000)
    await store.checkAndInsert('wamid.F')
    clock.advance(DEDUP_TTL_MS - 1)
    expect(await store.checkAndInsert('wamid.F')).toBe(true)
    clock.advance(1)
    expect(await store.checkAndInsert('wamid.F')).toBe(false)
  })

  it('drops expired ids as new ones arrive, so memory stays bounded', async () => {
    const clock = new ManualClock()
    const store = new MemoryDeduplicationStore({ clock })
    for (let i = 0; i < 9; i++) await store.checkAndInsert(`old-${i}`)
    clock.advance(DEDUP_TTL_MS / 2)
    await store.checkAndInsert('middle')
    await store.checkAndInsert('old-0') // still seen: keeps its place and expiry
    clock.advance(DEDUP_TTL_MS / 2)
    await store.checkAndInsert('new')
    expect(store.size).toBe(2)
    expect(await store.checkAndInsert('middle')).toBe(true)
    expect(await store.checkAndInsert('old-1')).toBe(false)
  })

  it('an id seen again after it expired gets a fresh 5 minutes', async () => {
    const clock = new ManualClock()
    const store = new MemoryDeduplicationStore({ clock })
    await store.checkAndInsert('a')
    clock.advance(DEDUP_TTL_MS)
    await store.checkAndInsert('b')
    expect(await store.checkAndInsert('a')).toBe(false)
    clock.advance(DEDUP_TTL_MS - 1)
    expect(await store.checkAndInsert('a')).toBe(true)
    expect(await store.checkAndInsert('b')).toBe(true)
    clock.advance(1)
    expect(await store.checkAndInsert('a')).toBe(false)
    expect(store.size).toBe(1)
  })
})

describe('KeyValueDeduplicationStore on the memory KeyValueStore', () => {
  contract(async () => {
    const clock = new ManualClock()
    const store = new KeyValueDeduplicationStore(new MemoryKeyValueStore({ clock }))
    return { store, expire: async () => clock.advance(DEDUP_TTL_MS) }
  })
})

describeWithRedis('KeyValueDeduplicationStore on Redis', () => {
  let redis: TestRedis
  beforeEach(async () => {
    redis = await createTestRedis()
  })
  afterEach(async () => {
    await redis.cleanup()
  })

  contract(async () => {
    const client = await readyClient(redis.connections)
    const store = new KeyValueDeduplicationStore(
      new RedisKeyValueStore(client, { prefix: `${redis.prefix}:` }),
      { ttlMs: 60_000 },
    )
    return {
      store,
      // Expiry is Redis's own PX; simulate the lifetime passing by expiring the key now.
      expire: async () => {
        const keys = await client.keys(`${redis.prefix}:msg-dedup:*`)
        for (const key of keys) await client.pexpire(key, 1)
        while ((await client.exists(...keys)) > 0) await new Promise((r) => setTimeout(r, 5))
      },
    }
  })

  it('sets the 5-minute lifetime on the Redis key', async () => {
    const client = await readyClient(redis.connections)
    const store = new KeyValueDeduplicationStore(
      new RedisKeyValueStore(client, { prefix: `${redis.prefix}:` }),
    )
    await store.checkAndInsert('wamid.G')
    const ttl = await client.pttl(`${redis.prefix}:msg-dedup:wamid.G`)
    expect(ttl).toBeGreaterThan(DEDUP_TTL_MS - 60_000)
    expect(ttl).toBeLessThanOrEqual(DEDUP_TTL_MS)
  })

  it("is shared by two instances (two connections): the second sees the first one's id", async () => {
    const a = new KeyValueDeduplicationStore(
      new RedisKeyValueStore(await readyClient(redis.connections), { prefix: `${redis.prefix}:` }),
    )
    const b = new KeyValueDeduplicationStore(
      new RedisKeyValueStore(await readyClient(redis.connections), { prefix: `${redis.prefix}:` }),
    )
    const results = await Promise.all([
      ...Array.from({ length: 20 }, () => a.checkAndInsert('wamid.H')),
      ...Array.from({ length: 20 }, () => b.checkAndInsert('wamid.H')),
    ])
    expect(results.filter((seen) => !seen)).toHaveLength(1)
  })
})
