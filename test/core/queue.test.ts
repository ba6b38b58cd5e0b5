import { afterEach, expect, it } from 'vitest'
import {
  backoffDelay,
  type JobContext,
  MemoryQueue,
  type QueueWorker,
  UnrecoverableJobError,
} from '../../src/core/index.ts'
import {
  describeEach,
  type QueueBackendOptions,
  queueBackends,
  sleep,
  type TestQueue,
} from './backends.ts'

/** A promise with its resolve function, to hold a job open until the test lets it go. */
function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void
  const promise = new Promise<void>((resolve) => {
    open = resolve
  })
  return { promise, open }
}

/** Waits until `check` is true, polling; the suite's own timeout bounds it. */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await sleep(10)
}

describeEach('Queue contract', queueBackends, (backend) => {
  const opened: TestQueue[] = []
  const workers: QueueWorker[] = []
  const fast = { retry: { attempts: 3, backoffMs: 20 } }

  async function create(options: QueueBackendOptions = fast) {
    const t = await backend.create(options)
    opened.push(t)
    return t.queue
  }

  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.close()))
    await Promise.all(opened.splice(0).map((t) => t.cleanup()))
  })

  it('tells where its jobs live', async () => {
    const queue = await create()
    expect(queue.kind).toBe(backend.name)
  })

  it('runs an enqueued job with its payload and context', async () => {
    const queue = await create()
    const seen: { payload: unknown; job: JobContext }[] = []
    workers.push(queue.work({ greet: async (payload, job) => void seen.push({ payload, job }) }))
    const { id } = await queue.enqueue('greet', { name: 'Ada', n: 1 })
    await queue.drain()
    expect(seen).toEqual([
      { payload: { name: 'Ada', n: 1 }, job: { id, name: 'greet', attempt: 1 } },
    ])
    expect(await queue.failed()).toEqual([])
  })

  it('runs jobs enqueued before a worker started', async () => {
    const queue = await create()
    const seen: number[] = []
    for (let i = 0; i < 5; i++) await queue.enqueue('count', { i })
    workers.push(queue.work({ count: async (p: { i: number }) => void seen.push(p.i) }))
    await until(() => seen.length === 5)
    await queue.drain()
    expect(seen.sort()).toEqual([0, 1, 2, 3, 4])
  })

  it('hands handlers plain JSON, as a JSON round trip gives it', async () => {
    const queue = await create()
    const seen: unknown[] = []
    workers.push(queue.work({ json: async (payload) => void seen.push(payload) }))
    await queue.enqueue('json', {
      when: new Date('2026-01-02T03:04:05.000Z'),
      skipped: undefined,
      map: new Map([['a', 1]]),
      nested: { list: [1, 'two', null, true] },
    })
    await queue.enqueue('json', undefined)
    await queue.enqueue('json', 'text')
    await queue.drain()
    expect(seen).toEqual([
      { when: '2026-01-02T03:04:05.000Z', map: {}, nested: { list: [1, 'two', null, true] } },
      null,
      'text',
    ])
  })

  it('rejects a payload that is not JSON, and keeps working', async () => {
    const queue = await create()
    const seen: unknown[] = []
    workers.push(queue.work({ job: async (payload) => void seen.push(payload) }))
    const circular: Record<string, unknown> = {}
    circular.self = circular
    await expect(queue.enqueue('job', { big: 1n })).rejects.toThrow(TypeError)
    await expect(queue.enqueue('job', circular)).rejects.toThrow(TypeError)
    await queue.enqueue('job', { ok: true })
    await queue.drain()
    expect(seen).toEqual([{ ok: true }])
  })

  it('runs jobs concurrently up to the concurrency given', async () => {
    const queue = await create()
    const hold = gate()
    let running = 0
    let most = 0
    let done = 0
    workers.push(
      queue.work(
        {
          slow: async () => {
            running++
            most = Math.max(most, running)
            await hold.promise
            running--
            done++
          },
        },
        { concurrency: 3 },
      ),
    )
    for (let i = 0; i < 6; i++) await queue.enqueue('slow', { i })
    await until(() => running === 3)
    hold.open()
    await until(() => done === 6)
    await queue.drain()
    expect(most).toBe(3)
  })

  it('retries a failing job with exponential backoff until it succeeds', async () => {
    const queue = await create()
    const attempts: { attempt: number; at: number }[] = []
    workers.push(
      queue.work({
        flaky: async (_payload, job) => {
          attempts.push({ attempt: job.attempt, at: Date.now() })
          if (job.attempt < 3) throw new Error(`boom ${job.attempt}`)
        },
      }),
    )
    await queue.enqueue('flaky', {})
    await queue.drain()
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3])
    const [first, second, third] = attempts as [
      (typeof attempts)[0],
      (typeof attempts)[0],
      (typeof attempts)[0],
    ]
    // Each retry waits at least its backoff: 20 ms, then 40 ms (a lower bound, not a speed test).
    expect(second.at - first.at).toBeGreaterThanOrEqual(19)
    expect(third.at - second.at).toBeGreaterThanOrEqual(39)
    expect(await queue.failed()).toEqual([])
  })

  it('keeps a job that used up its attempts, with its last error and attempt count', async () => {
    const queue = await create()
    let calls = 0
    workers.push(
      queue.work({
        doomed: async (_payload, job) => {
          calls++
          throw new Error(`failure on attempt ${job.attempt}`)
        },
      }),
    )
    const { id } = await queue.enqueue('doomed', { order: 42 })
    await queue.drain()
    expect(calls).toBe(3)
    const failed = await queue.failed()
    expect(failed).toHaveLength(1)
    expect(failed[0]).toMatchObject({
      id,
      name: 'doomed',
      payload: { order: 42 },
      error: 'failure on attempt 3',
      attempts: 3,
    })
    expect(failed[0]?.failedAt).toBeInstanceOf(Date)
  })

  it('lists failed jobs newest first, up to a limit', async () => {
    const queue = await create()
    workers.push(
      queue.work({
        bad: async (payload: { n: number }) => {
          throw new UnrecoverableJobError(`bad ${payload.n}`)
        },
      }),
    )
    for (let n = 1; n <= 3; n++) {
      await queue.enqueue('bad', { n })
      await queue.drain()
    }
    expect((await queue.failed()).map((f) => f.error)).toEqual(['bad 3', 'bad 2', 'bad 1'])
    expect((await queue.failed(2)).map((f) => f.error)).toEqual(['bad 3', 'bad 2'])
  })

  it('honours attempts given per job', async () => {
    const queue = await create()
    let calls = 0
    workers.push(
      queue.work({
        once: async () => {
          calls++
          throw new Error('no luck')
        },
      }),
    )
    await queue.enqueue('once', {}, { attempts: 1 })
    await queue.drain()
    expect(calls).toBe(1)
    expect((await queue.failed())[0]).toMatchObject({ name: 'once', attempts: 1, error: 'no luck' })
  })

  it('fails a job at once on UnrecoverableJobError', async () => {
    const queue = await create()
    let calls = 0
    workers.push(
      queue.work({
        invalid: async () => {
          calls++
          throw new UnrecoverableJobError('payload can never be processed')
        },
      }),
    )
    await queue.enqueue('invalid', {})
    await queue.drain()
    expect(calls).toBe(1)
    const [failed] = await queue.failed()
    expect(failed).toMatchObject({ error: 'payload can never be processed', attempts: 1 })
  })

  it('fails a job without a handler at once', async () => {
    const queue = await create()
    workers.push(queue.work({ known: async () => {} }))
    await queue.enqueue('unknown', { x: 1 })
    await queue.drain()
    const [failed] = await queue.failed()
    expect(failed).toMatchObject({ name: 'unknown', payload: { x: 1 }, attempts: 1 })
    expect(failed?.error).toContain('no handler for job "unknown"')
  })

  it('adds a job with a known jobId only once, while queued and after it ran', async () => {
    const queue = await create()
    const seen: unknown[] = []
    expect(await queue.enqueue('dedup', { n: 1 }, { jobId: 'message-1' })).toEqual({
      id: 'message-1',
    })
    expect(await queue.enqueue('dedup', { n: 2 }, { jobId: 'message-1' })).toEqual({
      id: 'message-1',
    })
    workers.push(queue.work({ dedup: async (payload) => void seen.push(payload) }))
    await queue.drain()
    await queue.enqueue('dedup', { n: 3 }, { jobId: 'message-1' })
    await queue.drain()
    expect(seen).toEqual([{ n: 1 }])
  })

  it('accepts any string as a jobId and hands it back unchanged', async () => {
    const queue = await create()
    const ids: string[] = []
    workers.push(queue.work({ any: async (_payload, job) => void ids.push(job.id) }))
    const wanted = ['wamid.HBgL:abc:def', '12345', '~tilde', 'plain-id', 'a:b']
    for (const jobId of wanted) expect((await queue.enqueue('any', {}, { jobId })).id).toBe(jobId)
    await queue.drain()
    expect(ids.sort()).toEqual([...wanted].sort())
  })

  it('gives every job without a jobId its own id', async () => {
    const queue = await create()
    const ids = await Promise.all(Array.from({ length: 20 }, () => queue.enqueue('x', {})))
    expect(new Set(ids.map((r) => r.id)).size).toBe(20)
  })

  it('drain waits for running jobs', async () => {
    const queue = await create()
    let finished = false
    workers.push(
      queue.work({
        slow: async () => {
          await sleep(100)
          finished = true
        },
      }),
    )
    await queue.enqueue('slow', {})
    await queue.drain()
    expect(finished).toBe(true)
  })

  it('drain waits for a retry that is waiting out its backoff', async () => {
    const queue = await create({ retry: { attempts: 2, backoffMs: 100 } })
    const attempts: number[] = []
    workers.push(
      queue.work({
        twice: async (_p, job) => {
          attempts.push(job.attempt)
          if (job.attempt === 1) throw new Error('first fails')
        },
      }),
    )
    await queue.enqueue('twice', {})
    await until(() => attempts.length === 1)
    await queue.drain()
    expect(attempts).toEqual([1, 2])
  })

  it('close waits for running jobs to finish', async () => {
    const queue = await create()
    const hold = gate()
    let started = false
    let finished = false
    queue.work({
      held: async () => {
        started = true
        await hold.promise
        finished = true
      },
    })
    await queue.enqueue('held', {})
    await until(() => started)
    let closed = false
    const closing = queue.close().then(() => {
      closed = true
    })
    await sleep(100)
    expect(closed).toBe(false)
    hold.open()
    await closing
    expect(finished).toBe(true)
  })

  it('a worker close waits for its running job', async () => {
    const queue = await create()
    const hold = gate()
    let started = false
    let finished = false
    const worker = queue.work({
      held: async () => {
        started = true
        await hold.promise
        finished = true
      },
    })
    await queue.enqueue('held', {})
    await until(() => started)
    const closing = worker.close()
    await sleep(50)
    expect(finished).toBe(false)
    hold.open()
    await closing
    expect(finished).toBe(true)
  })

  it('rejects enqueue after close', async () => {
    const queue = await create()
    await queue.close()
    await expect(queue.enqueue('late', {})).rejects.toThrow('queue is closed')
  })
})

it('backoff doubles from the base delay', () => {
  const policy = { attempts: 5, backoffMs: 1_000 }
  expect([1, 2, 3, 4].map((attempt) => backoffDelay(policy, attempt))).toEqual([
    1_000, 2_000, 4_000, 8_000,
  ])
})

it('the memory queue starts a job only after the code that queued it has run to its end', async () => {
  const queue = new MemoryQueue()
  const order: string[] = []
  queue.work({ job: async () => void order.push('job') })
  await queue.enqueue('job', {})
  // Still the caller's turn (a request handler answering): the job has not started.
  order.push('response')
  await queue.drain()
  expect(order).toEqual(['response', 'job'])
  await queue.close()
})
