import { Queue as BullQueue } from 'bullmq'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BullMqQueue, DependencyError, RedisConnections } from '../../src/core/index.ts'
import { decodeJobId, encodeJobId } from '../../src/core/queue/bullmq-queue.ts'
import { createTestRedis, describeWithRedis, type TestRedis } from '../support/redis.ts'

describe('BullMQ job ids', () => {
  it('keeps safe ids and encodes the ones BullMQ refuses, reversibly', () => {
    expect(encodeJobId('message-1')).toBe('message-1')
    for (const id of ['12', '-3', 'a:b', 'a:b:c', '~x', 'wamid.HBg:1', 'é:ü']) {
      const encoded = encodeJobId(id)
      expect(encoded).not.toContain(':')
      expect(`${Number.parseInt(encoded, 10)}`).not.toBe(encoded)
      expect(decodeJobId(encoded)).toBe(id)
    }
  })
})

describeWithRedis('BullMqQueue enqueue coalescing', () => {
  let redis: TestRedis
  let queue: BullMqQueue
  let inspect: BullQueue

  beforeEach(async () => {
    redis = await createTestRedis()
    queue = new BullMqQueue({
      connections: redis.connections,
      name: 'jobs',
      prefix: redis.prefix,
      retry: { attempts: 4, backoffMs: 20 },
    })
    inspect = new BullQueue('jobs', {
      connection: redis.connections.connect(),
      prefix: redis.prefix,
    })
  })
  afterEach(async () => {
    await inspect.close()
    await queue.close()
    await redis.cleanup()
  })

  it('stores every job of many concurrent callers, each with its own options', async () => {
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        queue.enqueue('bulk', { i }, i % 2 === 0 ? { jobId: `even:${i}`, attempts: 1 } : {}),
      ),
    )
    expect(new Set(results.map((r) => r.id)).size).toBe(200)
    expect(await inspect.getJobCountByTypes('waiting')).toBe(200)
    const even = await inspect.getJob(encodeJobId('even:10'))
    expect(even?.data).toEqual({ i: 10 })
    expect(even?.opts.attempts).toBe(1)
    const odd = await inspect.getJob(results[11]?.id ?? '')
    expect(odd?.data).toEqual({ i: 11 })
    expect(odd?.opts.attempts).toBe(4)
    expect(odd?.opts.backoff).toEqual({ type: 'exponential', delay: 20 })
  })

  it('resolves each caller only once Redis has its job', async () => {
    const ids = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const { id } = await queue.enqueue('visible', { i })
        // Read back right away through another connection: it must be there.
        const job = await inspect.getJob(id)
        expect(job?.data).toEqual({ i })
        return id
      }),
    )
    expect(ids).toHaveLength(20)
  })

  it('de-duplicates a jobId repeated inside one batch', async () => {
    const results = await Promise.all([
      queue.enqueue('dup', { n: 1 }, { jobId: 'same' }),
      queue.enqueue('dup', { n: 2 }, { jobId: 'same' }),
      queue.enqueue('dup', { n: 3 }, { jobId: 'other' }),
    ])
    expect(results.map((r) => r.id)).toEqual(['same', 'same', 'other'])
    expect(await inspect.getJobCountByTypes('waiting')).toBe(2)
    expect((await inspect.getJob('same'))?.data).toEqual({ n: 1 })
  })

  it('rejects only the caller whose payload is not JSON', async () => {
    const results = await Promise.allSettled([
      queue.enqueue('mixed', { ok: 1 }),
      queue.enqueue('mixed', { bad: 1n }),
      queue.enqueue('mixed', { ok: 2 }),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(await inspect.getJobCountByTypes('waiting')).toBe(2)
  })

  it('sends what is batched when closed right after enqueue', async () => {
    const pending = Promise.all([queue.enqueue('late', { n: 1 }), queue.enqueue('late', { n: 2 })])
    await queue.close()
    await pending
    expect(await inspect.getJobCountByTypes('waiting')).toBe(2)
  })

  it('without coalescing stores jobs one by one, the same way', async () => {
    const single = new BullMqQueue({
      connections: redis.connections,
      name: 'jobs',
      prefix: redis.prefix,
      coalesce: false,
    })
    try {
      await Promise.all(Array.from({ length: 10 }, (_, i) => single.enqueue('one', { i })))
      expect(await inspect.getJobCountByTypes('waiting')).toBe(10)
    } finally {
      await single.close()
    }
  })
})

describe('BullMqQueue with Redis unreachable', () => {
  // A closed port: connections are refused at once, as when Redis is down.
  const url = 'redis://:not-this-password@127.0.0.1:6390'

  it('rejects enqueue promptly with a dependency error naming host and port', async () => {
    const connections = new RedisConnections(url)
    const queue = new BullMqQueue({ connections, name: 'jobs', prefix: 'kiln-unreachable' })
    try {
      const results = await Promise.allSettled([
        queue.enqueue('a', { n: 1 }),
        queue.enqueue('b', { n: 2 }),
      ])
      for (const result of results) {
        expect(result.status).toBe('rejected')
        const error = (result as PromiseRejectedResult).reason as Error
        expect(error).toBeInstanceOf(DependencyError)
        expect(error.message).toMatch(/^Redis at 127\.0\.0\.1:6390 is unreachable/)
        expect(error.message).not.toContain('not-this-password')
      }
      // And again: a second attempt fails the same way instead of hanging.
      await expect(queue.enqueue('c', {})).rejects.toThrow('127.0.0.1:6390')
    } finally {
      await queue.close()
      await connections.close()
    }
  })

  it('rejects enqueue without coalescing too, and closes without hanging', async () => {
    const connections = new RedisConnections(url)
    const queue = new BullMqQueue({ connections, name: 'jobs', coalesce: false })
    await expect(queue.enqueue('a', {})).rejects.toThrow(/unreachable/)
    await queue.close()
    await connections.close()
  })
})
