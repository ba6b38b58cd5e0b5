/**
 * Open event streams (`GET /api/v1/posts/events`) on the demo's API on PostgreSQL: 1,000 and
 * 10,000 of them (100 and 1,000 with --quick), each a real socket from this process to a server
 * process. Measured per count: the server's memory per stream (heap and RSS after a full
 * collection, against the same server before its streams), the delivery latency from a
 * write's request to each stream's event (p50/p99, every stream and write) at a steady write
 * rate, and the writer's cost (the POST's own latency, against no stream open).
 * All streams use one key, so each change is read once per instance (docs/realtime.md).
 * The load generator shares the machine's cores with the server: latencies are upper bounds.
 */
import http from 'node:http'
import { startServer } from './http/index.ts'
import type { BenchOptions } from './lib.ts'
import { createDemoDatabase } from './servers/demo-database.ts'

const WRITES_PER_SECOND = 5

interface Stats {
  streams: number
  rss: number
  heapUsed: number
  external: number
  arrayBuffers: number
}

export default async function run(options: BenchOptions): Promise<string> {
  const counts = options.quick ? [0, 100, 1_000] : [0, 1_000, 10_000]
  const writes = options.quick ? 10 : 40
  const database = await createDemoDatabase(1)
  const rows: string[] = []
  try {
    for (const count of counts) {
      const server = await startServer<{ port: number }>(
        new URL('./servers/realtime-kiln.ts', import.meta.url),
        { env: { DATABASE_URL: database.url }, execArgv: ['--expose-gc'] },
      )
      try {
        rows.push(await measureCount(server.info.port, database.apiKey, count, writes))
      } finally {
        await server.stop()
      }
    }
  } finally {
    await database.drop()
  }
  return [
    '| streams | heap / stream | RSS / stream | delivery p50 | delivery p99 | events | write p50 | write p99 |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n')
}

async function measureCount(port: number, key: string, count: number, writes: number) {
  const origin = `http://127.0.0.1:${port}`
  const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY })
  const stats = async () => (await (await fetch(`${origin}/bench/stats`)).json()) as Stats
  // Warm the server (key cache, prepared statements) before its baseline.
  await post(origin, key, 'warm-up')
  const before = await stats()
  const sentAt = new Map<string, number>()
  const delays: number[] = []
  const streams = await openStreams(origin, key, count, agent, (title) => {
    const sent = sentAt.get(title)
    if (sent !== undefined) delays.push(performance.now() - sent)
  })
  while ((await stats()).streams < count) await sleep(100)
  const opened = await stats()
  const writeTimes: number[] = []
  for (let i = 0; i < writes; i++) {
    const title = `bench ${count} ${i}`
    const started = performance.now()
    sentAt.set(title, started)
    await post(origin, key, title)
    writeTimes.push(performance.now() - started)
    await sleep(Math.max(0, 1_000 / WRITES_PER_SECOND - (performance.now() - started)))
  }
  // Every stream gets every write: wait for them (bounded, so a lost event shows as a shortfall).
  for (let waited = 0; delays.length < count * writes && waited < 30_000; waited += 100) {
    await sleep(100)
  }
  for (const stream of streams) stream.destroy()
  agent.destroy()
  const per = (field: keyof Stats) =>
    count === 0 ? '–' : `${((opened[field] - before[field]) / count / 1024).toFixed(1)} KiB`
  const ms = (value: number | undefined) => (value === undefined ? '–' : `${value.toFixed(1)} ms`)
  return `| ${count.toLocaleString('en')} | ${per('heapUsed')} | ${per('rss')} | ${ms(
    quantile(delays, 0.5),
  )} | ${ms(quantile(delays, 0.99))} | ${delays.length.toLocaleString('en')} / ${(
    count * writes
  ).toLocaleString('en')} | ${ms(quantile(writeTimes, 0.5))} | ${ms(quantile(writeTimes, 0.99))} |`
}

async function openStreams(
  origin: string,
  key: string,
  count: number,
  agent: http.Agent,
  onCreated: (title: string) => void,
): Promise<http.ClientRequest[]> {
  const requests: http.ClientRequest[] = []
  // Opened in batches, so the server's accept queue is not flooded at once.
  for (let i = 0; i < count; i += 200) {
    const batch = Array.from({ length: Math.min(200, count - i) }, () =>
      openStream(origin, key, agent, onCreated),
    )
    requests.push(...(await Promise.all(batch)))
  }
  return requests
}

function openStream(
  origin: string,
  key: string,
  agent: http.Agent,
  onCreated: (title: string) => void,
): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      `${origin}/api/v1/posts/events?fields=id,title`,
      { agent, headers: { authorization: `Bearer ${key}` } },
      (response) => {
        if (response.statusCode !== 200) reject(new Error(`stream: ${response.statusCode}`))
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => {
          for (const match of chunk.matchAll(/"title":"(bench [^"]+)"/g)) onCreated(match[1]!)
        })
        response.on('error', () => {})
        resolve(request)
      },
    )
    request.on('error', reject)
  })
}

async function post(origin: string, key: string, title: string): Promise<void> {
  const response = await fetch(`${origin}/api/v1/posts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title, body: 'x', author_id: 1 }),
  })
  if (response.status !== 201) throw new Error(`write: ${response.status} ${await response.text()}`)
}

function quantile(values: number[], q: number): number | undefined {
  if (values.length === 0) return undefined
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
