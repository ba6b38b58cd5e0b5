import { type Agent, request } from 'node:http'
import { performance } from 'node:perf_hooks'

/** One line of a benchmark's result table: a subject measured beside its baseline. */
export interface BenchResult {
  name: string
  baseline: string
  /** Operations per second of the subject. */
  ops: number
  /** Operations per second of the baseline, measured in the same run. */
  baselineOps: number
  /** ops / baselineOps: the number that means something on a shared, noisy machine. */
  ratio: number
  notes?: string
}

export interface BenchOptions {
  /** A short run (CI smoke, first look); the full run is the one recorded in the docs. */
  quick: boolean
}

/** In-process benchmarks return rows; HTTP benchmarks (bench/http) return their markdown. */
export type Benchmark = (options: BenchOptions) => Promise<BenchResult[] | string>

/**
 * Runs `subject` and `baseline` in alternating rounds of `durationMs` each and returns the
 * operations per second of both, summed over all rounds. Alternating spreads the machine's
 * noise over both sides instead of letting it land on one.
 */
export async function compare(
  subject: () => Promise<unknown> | unknown,
  baseline: () => Promise<unknown> | unknown,
  options: { rounds?: number; durationMs?: number; concurrency?: number } = {},
): Promise<{ ops: number; baselineOps: number; ratio: number }> {
  const rounds = options.rounds ?? 6
  const durationMs = options.durationMs ?? 1_000
  const concurrency = options.concurrency ?? 1
  let subjectOps = 0
  let subjectMs = 0
  let baselineOps = 0
  let baselineMs = 0
  // A warm-up of each side, not counted.
  await measure(subject, Math.min(300, durationMs), concurrency)
  await measure(baseline, Math.min(300, durationMs), concurrency)
  for (let round = 0; round < rounds; round++) {
    const first = round % 2 === 0
    const a = await measure(first ? subject : baseline, durationMs, concurrency)
    const b = await measure(first ? baseline : subject, durationMs, concurrency)
    const s = first ? a : b
    const base = first ? b : a
    subjectOps += s.count
    subjectMs += s.ms
    baselineOps += base.count
    baselineMs += base.ms
  }
  const ops = (subjectOps / subjectMs) * 1000
  const bOps = (baselineOps / baselineMs) * 1000
  return { ops, baselineOps: bOps, ratio: ops / bOps }
}

/** Calls `fn` from `concurrency` loops for about `durationMs`; returns calls and elapsed ms. */
export async function measure(
  fn: () => Promise<unknown> | unknown,
  durationMs: number,
  concurrency = 1,
): Promise<{ count: number; ms: number }> {
  let count = 0
  const start = performance.now()
  const deadline = start + durationMs
  const loop = async () => {
    while (performance.now() < deadline) {
      await fn()
      count++
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop))
  return { count, ms: performance.now() - start }
}

export function formatTable(results: BenchResult[]): string {
  const lines = [
    '| benchmark | ops/s | baseline | baseline ops/s | ratio |',
    '|---|---:|---|---:|---:|',
  ]
  for (const r of results) {
    lines.push(
      `| ${r.name} | ${Math.round(r.ops).toLocaleString('en-US')} | ${r.baseline} | ${Math.round(r.baselineOps).toLocaleString('en-US')} | ${r.ratio.toFixed(2)}× |`,
    )
  }
  return lines.join('\n')
}

/** GET a JSON body over a keep-alive agent (node:http: the lightest client, so the server is measured). */
export function getJson(
  agent: Agent,
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`${path}: ${res.statusCode}`))
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')))
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}
