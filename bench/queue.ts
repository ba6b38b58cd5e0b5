/**
 * Enqueue throughput with 50 concurrent producers (a busy webhook endpoint): BullMQ with
 * same-turn calls coalesced into one `addBulk`, against one `add` round trip per call, and the
 * in-process memory queue for reference. Needs Redis: KILN_BENCH_REDIS_URL, else REDIS_URL,
 * else redis://127.0.0.1:6379.
 */
import { randomBytes } from 'node:crypto'
import { BullMqQueue, MemoryQueue, RedisConnections } from 'kilnjs/core'
import { type BenchOptions, type BenchResult, compare, measure } from './lib.ts'

const PRODUCERS = 50

export default async function run(options: BenchOptions): Promise<BenchResult[]> {
  const url = process.env.KILN_BENCH_REDIS_URL || process.env.REDIS_URL || 'redis://127.0.0.1:6379'
  const prefix = `kiln-bench-${randomBytes(4).toString('hex')}`
  const connections = new RedisConnections(url)
  const coalesced = new BullMqQueue({ connections, name: 'coalesced', prefix })
  const single = new BullMqQueue({ connections, name: 'single', prefix, coalesce: false })
  const memory = new MemoryQueue()
  // A worker that does nothing, so the in-process queue does not hold every job in memory.
  const memoryWorker = memory.work({ ProcessMessagingWebhook: async () => {} }, { concurrency: 50 })
  // A webhook-sized job: the raw body of a ~2 KB provider POST.
  const payload = { payload_json: JSON.stringify({ entry: 'x'.repeat(2_000) }) }
  const settings = {
    rounds: options.quick ? 2 : 6,
    durationMs: options.quick ? 300 : 1_000,
    concurrency: PRODUCERS,
  }
  try {
    const bullmq = await compare(
      () => coalesced.enqueue('ProcessMessagingWebhook', payload),
      () => single.enqueue('ProcessMessagingWebhook', payload),
      settings,
    )
    const cpu = {
      coalesced: await cpuPerCall(() => coalesced.enqueue('ProcessMessagingWebhook', payload)),
      single: await cpuPerCall(() => single.enqueue('ProcessMessagingWebhook', payload)),
    }
    // Not `compare`: the memory queue's worker must finish its backlog between rounds, or it
    // would run during the next BullMQ round and slow that one down.
    const inProcess = await alternate(
      async () => {
        await memory.enqueue('ProcessMessagingWebhook', payload)
      },
      () => memory.drain(),
      () => coalesced.enqueue('ProcessMessagingWebhook', payload),
      settings,
    )
    return [
      {
        name: `BullMQ enqueue, coalesced addBulk (${PRODUCERS} producers)`,
        baseline: 'BullMQ, one add per call',
        ...bullmq,
        notes:
          `each caller still resolves only once Redis has its job; this process's CPU per ` +
          `enqueue: ${cpu.coalesced.toFixed(0)} µs coalesced vs ${cpu.single.toFixed(0)} µs one add per call`,
      },
      {
        name: `memory queue enqueue (${PRODUCERS} producers)`,
        baseline: 'BullMQ, coalesced',
        ...inProcess,
        notes: 'in-process reference: no network, nothing survives a restart',
      },
    ]
  } finally {
    await memoryWorker.close()
    await coalesced.close()
    await single.close()
    await memory.close()
    await deleteKeys(connections, prefix)
    await connections.close()
  }
}

/** Like `compare`, with `settle` run (untimed) after each round of the subject. */
async function alternate(
  subject: () => Promise<unknown>,
  settle: () => Promise<unknown>,
  baseline: () => Promise<unknown>,
  settings: { rounds: number; durationMs: number; concurrency: number },
): Promise<{ ops: number; baselineOps: number; ratio: number }> {
  const totals = { subject: 0, subjectMs: 0, baseline: 0, baselineMs: 0 }
  for (let round = 0; round < settings.rounds; round++) {
    const s = await measure(subject, settings.durationMs, settings.concurrency)
    await settle()
    const b = await measure(baseline, settings.durationMs, settings.concurrency)
    totals.subject += s.count
    totals.subjectMs += s.ms
    totals.baseline += b.count
    totals.baselineMs += b.ms
  }
  const ops = (totals.subject / totals.subjectMs) * 1000
  const baselineOps = (totals.baseline / totals.baselineMs) * 1000
  return { ops, baselineOps, ratio: ops / baselineOps }
}

/** CPU time of this process per call (user + system, µs), with the same 50 producers. */
async function cpuPerCall(fn: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage()
  const { count } = await measure(fn, 1_000, PRODUCERS)
  const used = process.cpuUsage(before)
  return (used.user + used.system) / count
}

async function deleteKeys(connections: RedisConnections, prefix: string): Promise<void> {
  const redis = connections.connect()
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000)
    cursor = next
    if (keys.length > 0) await redis.unlink(...keys)
  } while (cursor !== '0')
}
