/**
 * Interleaved rounds of HTTP load against two or more servers: every round runs each target once
 * (the order rotates from round to round), so whatever else the machine does lands on all of
 * them alike. Per target and round: requests per second, p50/p99 latency, and the CPU time the
 * server process spent per request (from /proc, so the load generator is not counted). Ratios
 * are taken per round, and their median is the result.
 *
 * A closed loop at full speed says how much a server can answer, not how slow its slowest
 * answers are at the load it is run at: the server that answers sooner is sent more. So after
 * the closed-loop rounds come as many rounds at **equal offered load**: every target gets the
 * same paced load (each connection pauses before each request), a share of the slowest
 * target's closed-loop rate (`pacedShare`), and the p99 of those rounds is compared.
 */
import { loadavg } from 'node:os'
import { processCpuUs } from './server.ts'
import { type HttpRequest, type LoadResult, runWrk } from './wrk.ts'

export interface HttpTarget {
  /** What this server is, as the result table names it. */
  label: string
  /** `http://127.0.0.1:<port>` */
  origin: string
  /** The server's process, whose CPU time is read around every round. */
  pid: number
  /**
   * What to send: a fixed list (replayed in order), or a function called before every timed
   * burst, untimed, for requests that must be fresh (new message ids, new signatures).
   */
  requests: HttpRequest[] | ((round: number) => HttpRequest[] | Promise<HttpRequest[]>)
  /** Every request may be sent once only: a burst that runs out of requests fails. */
  unique?: boolean
}

export interface RoundsOptions {
  /** Timed rounds; each runs every target once. Default 3. */
  rounds?: number
  /** Length of each target's burst, in seconds. Default 5. */
  seconds?: number
  /** An untimed burst per target before the first round. Default 2 s; 0 for none. */
  warmupSeconds?: number
  /** Connections, one request in flight on each. Default 50 (`wrk -c50`). */
  connections?: number
  /** wrk threads. Default 1. */
  threads?: number
  /** A pause before each request on each connection, ms (`LoadOptions.pauseMs`). Default 0. */
  pauseMs?: number
  /**
   * The paced rounds' offered load, as a share of the slowest target's median closed-loop
   * requests per second (default 0.6, `KILN_BENCH_PACED_SHARE`; 0 runs no paced rounds).
   * Ignored when `pauseMs` is given: the rounds are paced already.
   */
  pacedShare?: number
  /** Other CPU counters (µs used so far), read around every burst: Redis's `INFO cpu`, … */
  cpuProbes?: Record<string, () => number | Promise<number>>
  /** Called after every burst (progress on stderr by default). */
  onBurst?: (label: string, round: number, burst: Burst) => void
}

export interface Burst extends LoadResult {
  /** Server CPU time per request, µs. */
  cpuUs: number
  /** Each probe's CPU time per request, µs. */
  probesUs: Record<string, number>
  /** 1-minute load average when the burst ended. */
  load: number
}

export interface RoundsResult {
  labels: string[]
  /** bursts[round][target] */
  bursts: Burst[][]
  /** The rounds at equal offered load, when they ran. */
  paced?: PacedRounds
  loadBefore: number[]
  loadAfter: number[]
}

export interface PacedRounds {
  /** The rate offered to every target: `pacedShare` of the slowest closed-loop rate. */
  offeredRps: number
  /** Each connection's pause before each request, ms. */
  pauseMs: number
  /** bursts[round][target], as the closed loop's. */
  bursts: Burst[][]
}

/**
 * Rounds and burst length for a benchmark: `quick` is one short round (a smoke run);
 * KILN_BENCH_ROUNDS and KILN_BENCH_SECONDS override the defaults (3 rounds of 5 s).
 */
export function roundsFromEnv(
  quick: boolean,
): Pick<RoundsOptions, 'rounds' | 'seconds' | 'warmupSeconds'> {
  if (quick) return { rounds: 1, seconds: 2, warmupSeconds: 1 }
  return {
    rounds: Number(process.env.KILN_BENCH_ROUNDS ?? 3),
    seconds: Number(process.env.KILN_BENCH_SECONDS ?? 5),
    warmupSeconds: 2,
  }
}

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  if (sorted.length === 0) return Number.NaN
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

async function burst(
  target: HttpTarget,
  round: number,
  seconds: number,
  options: RoundsOptions,
): Promise<Burst> {
  const requests =
    typeof target.requests === 'function' ? await target.requests(round) : target.requests
  const probes = Object.entries(options.cpuProbes ?? {})
  const probesBefore = await Promise.all(probes.map(([, probe]) => probe()))
  const cpuBefore = processCpuUs(target.pid)
  const result = await runWrk(target.origin, requests, {
    connections: options.connections ?? 50,
    threads: options.threads ?? 1,
    seconds,
    pauseMs: options.pauseMs ?? 0,
  })
  const cpuUs = processCpuUs(target.pid) - cpuBefore
  const probesAfter = await Promise.all(probes.map(([, probe]) => probe()))
  if (result.errorStatuses > 0) {
    throw new Error(`${target.label}: ${result.errorStatuses} answers with status ≥ 400`)
  }
  if (target.unique && result.wrapped > 0) {
    throw new Error(`${target.label}: ran out of unique requests (${requests.length}); make more`)
  }
  const per = (us: number) => us / Math.max(1, result.requests)
  return {
    ...result,
    cpuUs: per(cpuUs),
    probesUs: Object.fromEntries(
      probes.map(([name], i) => [
        name,
        per((probesAfter[i] as number) - (probesBefore[i] as number)),
      ]),
    ),
    load: loadavg()[0] ?? 0,
  }
}

/** The paced rounds' share of the slowest closed-loop rate: the option, else the environment. */
function pacedShareOf(options: RoundsOptions): number {
  if (options.pauseMs) return 0
  const share = options.pacedShare ?? Number(process.env.KILN_BENCH_PACED_SHARE ?? 0.6)
  if (!(share >= 0 && share < 1)) throw new TypeError('KILN_BENCH_PACED_SHARE must be in [0, 1)')
  return share
}

/** Every target once per round, the order rotating; `label` prefixes the progress lines. */
async function interleave(
  targets: HttpTarget[],
  options: RoundsOptions,
  label = '',
): Promise<Burst[][]> {
  const rounds = options.rounds ?? 3
  const seconds = options.seconds ?? 5
  const report =
    options.onBurst ??
    ((name: string, round: number, b: Burst) =>
      process.stderr.write(
        `  round ${round + 1} ${label}${name}: ${Math.round(b.rps)} req/s, p50 ${b.p50Ms.toFixed(2)} ms, ` +
          `p99 ${b.p99Ms.toFixed(1)} ms, ${b.cpuUs.toFixed(0)} µs CPU/req, load ${b.load.toFixed(1)}\n`,
      ))
  const bursts: Burst[][] = []
  for (let round = 0; round < rounds; round++) {
    const row: Burst[] = new Array(targets.length)
    for (let k = 0; k < targets.length; k++) {
      const index = (round + k) % targets.length
      const target = targets[index] as HttpTarget
      const b = await burst(target, round, seconds, options)
      report(target.label, round, b)
      row[index] = b
    }
    bursts.push(row)
  }
  return bursts
}

/** Runs every target once per round, rotating the order, then the paced rounds; see the file comment. */
export async function runRounds(
  targets: HttpTarget[],
  options: RoundsOptions = {},
): Promise<RoundsResult> {
  const warmup = options.warmupSeconds ?? 2
  const loadBefore = loadavg()
  if (warmup > 0) for (const target of targets) await burst(target, -1, warmup, options)
  const bursts = await interleave(targets, options)
  const share = pacedShareOf(options)
  let paced: PacedRounds | undefined
  if (share > 0) {
    const slowest = Math.min(...targets.map((_, i) => median(bursts.map((row) => row[i]!.rps))))
    const offeredRps = slowest * share
    // Each connection's cycle is its pause plus the answer's time; at the offered rates the
    // answer takes a millisecond or two, so the pause alone sets the rate closely enough (the
    // rate measured is reported beside it).
    const pauseMs = ((options.connections ?? 50) / offeredRps) * 1000
    const pacedBursts = await interleave(targets, { ...options, pauseMs }, 'paced, ')
    paced = { offeredRps, pauseMs, bursts: pacedBursts }
  }
  return {
    labels: targets.map((t) => t.label),
    bursts,
    ...(paced ? { paced } : {}),
    loadBefore,
    loadAfter: loadavg(),
  }
}

export interface Ratio {
  subject: string
  baseline: string
  /** subject req/s ÷ baseline req/s, per round. */
  perRound: number[]
  /** The median of perRound: the figure reported. */
  median: number
  subjectRps: number
  baselineRps: number
  subjectP50Ms: number
  subjectP99Ms: number
  baselineP50Ms: number
  baselineP99Ms: number
  subjectCpuUs: number
  baselineCpuUs: number
  /** Median probe CPU per request, subject side. */
  subjectProbesUs: Record<string, number>
  loads: number[]
  /** The same two at equal offered load, when the paced rounds ran. */
  paced?: PacedRatio
}

export interface PacedRatio {
  offeredRps: number
  /** subject p99 ÷ baseline p99, per paced round. */
  p99PerRound: number[]
  subjectP50Ms: number
  subjectP99Ms: number
  baselineP50Ms: number
  baselineP99Ms: number
}

/** The ratio of two targets of one run (by label), round by round, with medians of the rest. */
export function ratio(result: RoundsResult, subject: string, baseline: string): Ratio {
  const s = result.labels.indexOf(subject)
  const b = result.labels.indexOf(baseline)
  if (s < 0 || b < 0) throw new TypeError(`unknown target ${s < 0 ? subject : baseline}`)
  const side = (index: number, rounds = result.bursts) => rounds.map((row) => row[index] as Burst)
  const subjects = side(s)
  const baselines = side(b)
  const m = (bursts: Burst[], pick: (b: Burst) => number) => median(bursts.map(pick))
  const paced = (rounds: PacedRounds): PacedRatio => {
    const [x, y] = [side(s, rounds.bursts), side(b, rounds.bursts)]
    return {
      offeredRps: rounds.offeredRps,
      p99PerRound: x.map((burst, i) => burst.p99Ms / (y[i] as Burst).p99Ms),
      subjectP50Ms: m(x, (burst) => burst.p50Ms),
      subjectP99Ms: m(x, (burst) => burst.p99Ms),
      baselineP50Ms: m(y, (burst) => burst.p50Ms),
      baselineP99Ms: m(y, (burst) => burst.p99Ms),
    }
  }
  const probeNames = Object.keys(subjects[0]?.probesUs ?? {})
  const perRound = subjects.map((x, i) => x.rps / (baselines[i] as Burst).rps)
  return {
    subject,
    baseline,
    perRound,
    median: median(perRound),
    subjectRps: m(subjects, (x) => x.rps),
    baselineRps: m(baselines, (x) => x.rps),
    subjectP50Ms: m(subjects, (x) => x.p50Ms),
    subjectP99Ms: m(subjects, (x) => x.p99Ms),
    baselineP50Ms: m(baselines, (x) => x.p50Ms),
    baselineP99Ms: m(baselines, (x) => x.p99Ms),
    subjectCpuUs: m(subjects, (x) => x.cpuUs),
    baselineCpuUs: m(baselines, (x) => x.cpuUs),
    subjectProbesUs: Object.fromEntries(
      probeNames.map((name) => [name, m(subjects, (x) => x.probesUs[name] ?? 0)]),
    ),
    loads: subjects.map((x, i) => Math.max(x.load, (baselines[i] as Burst).load)),
    ...(result.paced ? { paced: paced(result.paced) } : {}),
  }
}

/** Two targets in interleaved rounds: the common case. */
export async function compareHttp(
  subject: HttpTarget,
  baseline: HttpTarget,
  options: RoundsOptions = {},
): Promise<Ratio> {
  const result = await runRounds([subject, baseline], options)
  return ratio(result, subject.label, baseline.label)
}

const int = (n: number) => Math.round(n).toLocaleString('en-US')
const ms = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1))

/** The paced cells: the p99 ratio per round, and both sides' p50 / p99 at the offered rate. */
export function formatPaced(paced: PacedRatio | undefined): string {
  if (!paced) return 'not run'
  const perRound = paced.p99PerRound.map((x) => x.toFixed(2)).join(', ')
  return (
    `**${median(paced.p99PerRound).toFixed(2)}×** (${perRound}) at ${int(paced.offeredRps)} req/s: ` +
    `${ms(paced.subjectP50Ms)} / ${ms(paced.subjectP99Ms)} vs ${ms(paced.baselineP50Ms)} / ${ms(paced.baselineP99Ms)}`
  )
}

/** Markdown table rows, one per ratio: the format docs/performance.md uses. */
export function formatRatios(ratios: Ratio[]): string {
  const lines = [
    '| subject | baseline | ratio (median) | per round | req/s | p50 / p99 ms | server CPU µs/req | load | equal offered load: p99 ratio (per round), p50 / p99 ms |',
    '|---|---|---:|---|---:|---|---|---|---|',
  ]
  for (const r of ratios) {
    const probes = Object.entries(r.subjectProbesUs)
      .map(([name, us]) => ` (+${us.toFixed(0)} ${name})`)
      .join('')
    lines.push(
      `| ${r.subject} | ${r.baseline} | **${r.median.toFixed(2)}×** | ${r.perRound.map((x) => x.toFixed(2)).join(', ')} | ` +
        `${int(r.subjectRps)} vs ${int(r.baselineRps)} | ${ms(r.subjectP50Ms)} / ${ms(r.subjectP99Ms)} vs ` +
        `${ms(r.baselineP50Ms)} / ${ms(r.baselineP99Ms)} | ${r.subjectCpuUs.toFixed(0)}${probes} vs ` +
        `${r.baselineCpuUs.toFixed(0)} | ${r.loads.map((x) => x.toFixed(1)).join(', ')} | ${formatPaced(r.paced)} |`,
    )
  }
  return lines.join('\n')
}
