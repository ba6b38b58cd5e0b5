import { afterEach, expect, it } from 'vitest'
import {
  EventBus,
  type KeyValueStore,
  MemoryKeyValueStore,
  type QueueWorker,
  RedisKeyValueStore,
} from '../../src/core/index.ts'
import { createTestRedis } from '../support/redis.ts'
import { describeEach, queueBackends, type TestQueue } from './backends.ts'

type Events = { 'status.updated': { id: string } }

/** The memory queue with a memory store; BullMQ with a Redis store, as instances share them. */
async function storeFor(name: 'memory' | 'bullmq') {
  if (name === 'memory') {
    const store = new MemoryKeyValueStore()
    return { store, cleanup: () => store.close() }
  }
  const redis = await createTestRedis()
  const store = new RedisKeyValueStore(redis.connections.connect(), { prefix: `${redis.prefix}:` })
  return { store, cleanup: () => redis.cleanup() }
}

describeEach('A busy listener claim postpones its job', queueBackends, (backend) => {
  const opened: { cleanup(): Promise<void> }[] = []
  const workers: QueueWorker[] = []

  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.close()
    for (const t of opened.splice(0).reverse()) await t.cleanup()
  })

  async function setUp(retry: { attempts: number; backoffMs: number; postponements?: number }) {
    const t: TestQueue = await backend.create({ retry })
    const s = await storeFor(backend.name)
    opened.push(s, t)
    return { queue: t.queue, store: s.store as KeyValueStore }
  }

  it('a claim held longer than every retry lasts: the job waits for it, its attempts untouched', async () => {
    const { queue, store } = await setUp({ attempts: 2, backoffMs: 10 })
    const claimTtlMs = 400
    const bus = new EventBus<Events>({ store, claimTtlMs })
    const runs: number[] = []
    bus.on('status.updated', () => void runs.push(Date.now()), 'count')
    // Another instance's claim (it crashed mid-run, or its undo was never sent): held by nobody.
    const mark = 'event:status.updated:e:count'
    await store.set(mark, 'running:elsewhere', { ttlMs: claimTtlMs })
    const attempts: number[] = []
    const start = Date.now()
    workers.push(
      queue.work({
        emit: async (_payload, job) => {
          attempts.push(job.attempt)
          await bus.emitOrThrow('status.updated', { id: 'a' }, { id: 'e' })
        },
      }),
    )
    await queue.enqueue('emit', {})
    await queue.drain()
    expect(await queue.failed()).toEqual([])
    expect(runs).toHaveLength(1)
    expect(runs[0]! - start).toBeGreaterThanOrEqual(claimTtlMs - 20)
    // The busy runs spent no attempt: every run was the first.
    expect(new Set(attempts)).toEqual(new Set([1]))
    expect(await store.get(mark)).toBe('handled')
  })

  it('a claim that stays busy postpones the job a bounded number of times, then it fails', async () => {
    const { queue, store } = await setUp({ attempts: 2, backoffMs: 10, postponements: 2 })
    const bus = new EventBus<Events>({ store, claimTtlMs: 50 })
    bus.on('status.updated', () => {}, 'count')
    await store.set('event:status.updated:e:count', 'running:elsewhere')
    let calls = 0
    workers.push(
      queue.work({
        emit: async () => {
          calls++
          await bus.emitOrThrow('status.updated', { id: 'a' }, { id: 'e' })
        },
      }),
    )
    await queue.enqueue('emit', {})
    await queue.drain()
    // Two postponements, then the two attempts of an ordinary failure.
    expect(calls).toBe(4)
    const [failed] = await queue.failed()
    expect(failed).toMatchObject({ attempts: 2 })
    expect(failed?.error).toMatch(/count/)
  })
})
