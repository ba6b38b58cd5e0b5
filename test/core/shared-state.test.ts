import { afterEach, describe, expect, it } from 'vitest'
import {
  createSharedState,
  MemoryKeyValueStore,
  RedisConnections,
  RedisKeyValueStore,
  type SharedState,
} from '../../src/core/index.ts'
import { pingRedis, redisAddress } from '../../src/core/redis.ts'
import { redisUrl } from '../support/env.ts'
import { createTestRedis, describeWithRedis } from '../support/redis.ts'

const opened: SharedState[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((state) => state.close()))
})

describe('createSharedState without a Redis URL', () => {
  it('keeps everything in this process', async () => {
    const state = await createSharedState({})
    opened.push(state)
    expect(state.kind).toBe('memory')
    expect(state.kv).toBeInstanceOf(MemoryKeyValueStore)
    expect(state.queue.kind).toBe('memory')
    expect(state.redis).toBeUndefined()
    expect(state.client).toBeUndefined()
    const seen: unknown[] = []
    const worker = state.queue.work({ job: async (payload) => void seen.push(payload) })
    await state.queue.enqueue('job', { n: 1 })
    await state.queue.drain()
    await worker.close()
    expect(seen).toEqual([{ n: 1 }])
  })

  it('an empty URL means memory too', async () => {
    const state = await createSharedState({ redisUrl: '' })
    opened.push(state)
    expect(state.kind).toBe('memory')
  })
})

describeWithRedis('createSharedState with a Redis URL', () => {
  it('puts the KeyValueStore and the queue on Redis, under the prefix', async () => {
    const test = await createTestRedis()
    try {
      const state = await createSharedState({ redisUrl, prefix: test.prefix })
      opened.push(state)
      expect(state.kind).toBe('redis')
      expect(state.kv).toBeInstanceOf(RedisKeyValueStore)
      expect(state.queue.kind).toBe('bullmq')
      expect(state.redis).toBeInstanceOf(RedisConnections)
      expect(await state.client?.ping()).toBe('PONG')
      await state.kv.set('greeting', 'hello')
      const direct = test.connections.connect()
      expect(await direct.get(`${test.prefix}:greeting`)).toBe('hello')
      // Two instances on one Redis share the state.
      const other = await createSharedState({ redisUrl, prefix: test.prefix })
      opened.push(other)
      expect(await other.kv.take('greeting')).toBe('hello')
      expect(await state.kv.get('greeting')).toBeUndefined()
      const seen: unknown[] = []
      const worker = other.queue.work({ job: async (payload) => void seen.push(payload) })
      await state.queue.enqueue('job', { from: 'first instance' })
      await other.queue.drain()
      await worker.close()
      expect(seen).toEqual([{ from: 'first instance' }])
    } finally {
      await Promise.all(opened.splice(0).map((state) => state.close()))
      await test.cleanup()
    }
  })

  it('close() closes every connection it opened', async () => {
    const test = await createTestRedis()
    try {
      const state = await createSharedState({ redisUrl, prefix: test.prefix })
      const client = state.client
      await state.queue.enqueue('job', {})
      await state.close()
      // ioredis words a command on a closed connection either way, depending on when it ended.
      await expect(client?.ping()).rejects.toThrow(/Connection is closed|Stream isn't writeable/)
    } finally {
      await test.cleanup()
    }
  })
})

describe('createSharedState with an unreachable Redis', () => {
  it('rejects with one line naming host and port, never the password', async () => {
    const error = await createSharedState({
      redisUrl: 'redis://user:p4ssw0rd-not-logged@127.0.0.1:6390/0',
    }).catch((e: unknown) => e as Error)
    expect(error).toBeInstanceOf(Error)
    const message = (error as Error).message
    expect(message).toMatch(/^Redis at 127\.0\.0\.1:6390 is unreachable \(.+\)$/)
    expect(message).not.toContain('\n')
    expect(message).not.toContain('p4ssw0rd')
  })

  it('a host that never answers fails once the ping timeout is reached', async () => {
    const connections = new RedisConnections('redis://127.0.0.1:6390', {
      // Keep reconnecting for ever: only the ping's own timeout can end the wait.
      maxRetriesPerRequest: null,
    })
    try {
      await expect(pingRedis(connections.connect(), connections.url, 300)).rejects.toThrow(
        /^Redis at 127\.0\.0\.1:6390 is unreachable \(.+\)$/,
      )
    } finally {
      await connections.close()
    }
  })
})

describe('redisAddress', () => {
  it('gives host:port without credentials', () => {
    expect(redisAddress('redis://:pw@cache.internal:6380/1')).toBe('cache.internal:6380')
    expect(redisAddress('rediss://user:pw@cache')).toBe('cache:6379')
    expect(redisAddress('not a url')).toBe('(invalid Redis URL)')
  })
})
