/**
 * The tail with slow queries mixed into fast ones: the demo's generated REST API
 * (bench/servers/rest-kiln.ts) on 100,000 posts, once with its pipelined connections (kiln's
 * default, 4) and once with `pipelineConnections: 0` (a pooled connection per query), each its
 * own child process, loaded by wrk in interleaved rounds (bench/http). The mixed load: of every
 * 20 requests, 9 shows of a random post, 9 first pages and 2 deep offset pages (a scan of
 * 80,000 rows each). Then the fast path alone (shows), to see what pipelining gives there.
 * The deep pages are what the list planner calls slow (`pageMayBeSlow`): the pipelined server
 * runs them on pooled connections under the query budget, its shows and first pages pipelined.
 * The pipelined server bounds them as kiln does by default: at most `poolMax - pipelineConnections`
 * (6) budgeted queries at once, the others waiting their turn (`slowQueryConcurrency`).
 * The target: the mixed load's p99 at most 1.2× the pooled server's (`P99_BOUND`).
 *
 * The mixed load's p99 is one figure for both kinds of request. To see them apart, the split
 * load drives the same server with two wrk processes at once, each with its own latency
 * distribution: 45 connections of fast requests (shows and first pages, alternately) beside 5
 * connections of deep pages (`FAST_CONNECTIONS`, `DEEP_CONNECTIONS`). It is a load of its own
 * (a tenth of the connections busy with deep pages, not a tenth of the requests), in the same
 * interleaved rounds.
 *
 * Both loads are closed loops at full speed: each connection sends its next request the moment
 * the last is answered, so the server that answers fast requests sooner holds more of its
 * connections on deep pages. So each load is followed by paced rounds (`runRounds`), which offer
 * the same rate to both servers, below what either can answer: the p99 of the same load.
 *
 * `npm run bench -- tail` (`--quick`: 10^4 rows, one short round). Needs wrk and PostgreSQL
 * (KILN_BENCH_DATABASE_URL, else KILN_TEST_DATABASE_URL, else
 * postgres://postgres@127.0.0.1:5432/postgres).
 */
import {
  formatRatios,
  type HttpRequest,
  type LoadResult,
  median,
  ratio,
  roundsFromEnv,
  runRounds,
  runWrk,
  startServer,
} from './http/index.ts'
import type { BenchOptions } from './lib.ts'
import { randomIds } from './rest-api.ts'
import { createDemoDatabase } from './servers/demo-database.ts'

const PER_PAGE = 20
/** The tail's target: the pipelined server's mixed p99 over the pooled one's, at most. */
const P99_BOUND = 1.2
/** The split load: connections sending fast requests, and beside them deep pages. */
const FAST_CONNECTIONS = 45
const DEEP_CONNECTIONS = 5
const CONNECTIONS = 50

export default async function run({ quick }: BenchOptions): Promise<string> {
  const rows = quick ? 10_000 : 100_000
  const database = await createDemoDatabase(rows)
  const server = (pipeline: string) =>
    startServer<{ port: number }>(new URL('./servers/rest-kiln.ts', import.meta.url), {
      env: {
        DATABASE_URL: database.url,
        KILN_BENCH_PIPELINE: pipeline,
        // The pipelined server's turns for slow queries (default kiln's: poolMax - pipes).
        KILN_BENCH_SLOW_QUERIES:
          pipeline === '0' ? '' : (process.env.KILN_BENCH_SLOW_QUERIES ?? ''),
      },
    })
  const servers = await Promise.all([server('4'), server('0')]).catch(async (error) => {
    await database.drop()
    throw error
  })
  const [pipelined, pooled] = servers as [(typeof servers)[0], (typeof servers)[0]]
  const headers = { authorization: `Bearer ${database.apiKey}` }
  const deep = Math.floor((rows / PER_PAGE) * 0.8)
  const ids = randomIds(rows)
  const mixed: HttpRequest[] = ids.map((id, i) => {
    const slot = i % 20
    if (slot < 9) return { path: `/api/v1/posts/${id}`, headers }
    if (slot < 18) return { path: `/api/v1/posts?page=1&per_page=${PER_PAGE}`, headers }
    return { path: `/api/v1/posts?page=${deep}&per_page=${PER_PAGE}`, headers }
  })
  const shows: HttpRequest[] = ids.map((id) => ({ path: `/api/v1/posts/${id}`, headers }))
  const fast: HttpRequest[] = ids.map((id, i) =>
    i % 2 === 0
      ? { path: `/api/v1/posts/${id}`, headers }
      : { path: `/api/v1/posts?page=1&per_page=${PER_PAGE}`, headers },
  )
  const deepPages: HttpRequest[] = [
    { path: `/api/v1/posts?page=${deep}&per_page=${PER_PAGE}`, headers },
  ]
  const on = (target: typeof pipelined, label: string, requests: HttpRequest[]) => ({
    label,
    origin: `http://127.0.0.1:${target.info.port}`,
    pid: target.pid,
    requests,
  })
  try {
    // The mixed load and the shows in rounds of their own, each followed by its paced rounds
    // (`runRounds`): the same load offered to both servers, 60% of the slower one's rate.
    const options = roundsFromEnv(quick)
    const mixedRounds = await runRounds(
      [
        on(pipelined, 'mixed, pipelined (4)', mixed),
        on(pooled, 'mixed, pipelineConnections: 0', mixed),
      ],
      { ...options, connections: CONNECTIONS },
    )
    const showRounds = await runRounds(
      [
        on(pipelined, 'shows, pipelined (4)', shows),
        on(pooled, 'shows, pipelineConnections: 0', shows),
      ],
      { ...options, connections: CONNECTIONS },
    )
    const mixedRatio = ratio(mixedRounds, 'mixed, pipelined (4)', 'mixed, pipelineConnections: 0')
    const showRatio = ratio(showRounds, 'shows, pipelined (4)', 'shows, pipelineConnections: 0')
    // p99 of the pipelined server over the pooled one's, round by round.
    const p99PerRound = mixedRounds.bursts.map((row) => row[0]!.p99Ms / row[1]!.p99Ms)
    const within = (xs: number[]) => xs.filter((x) => x <= P99_BOUND).length
    const pacedWithin = within(mixedRatio.paced?.p99PerRound ?? [])
    const split = await splitRounds(
      [
        { label: 'pipelined (4)', origin: `http://127.0.0.1:${pipelined.info.port}` },
        { label: 'pipelineConnections: 0', origin: `http://127.0.0.1:${pooled.info.port}` },
      ],
      fast,
      deepPages,
      options,
    )
    return [
      formatRatios([mixedRatio, showRatio]),
      `Mixed load, p99 pipelined ÷ p99 pooled per round: ${p99PerRound.map((x) => x.toFixed(2)).join(', ')} ` +
        `(deep page: ${deep}, ${rows.toLocaleString('en-US')} posts); ` +
        `within ${P99_BOUND}× in ${within(p99PerRound)} of ${p99PerRound.length} rounds. ` +
        `At equal offered load (the last column): within ${P99_BOUND}× in ${pacedWithin} of ` +
        `${mixedRatio.paced?.p99PerRound.length ?? 0} rounds.`,
      formatSplit(split),
    ].join('\n\n')
  } finally {
    await Promise.all(servers.map((s) => s.stop()))
    await database.drop()
  }
}

interface SplitBurst {
  fast: LoadResult
  deep: LoadResult
}

/**
 * The split load in interleaved rounds: per round each server once (the order rotating), its
 * fast requests and its deep pages sent at once by two wrk processes.
 */
async function splitRounds(
  targets: Array<{ label: string; origin: string }>,
  fast: HttpRequest[],
  deep: HttpRequest[],
  { rounds = 3, seconds = 5, warmupSeconds = 2 }: ReturnType<typeof roundsFromEnv>,
): Promise<{ labels: string[]; bursts: SplitBurst[][] }> {
  const burst = async (origin: string, label: string, length: number): Promise<SplitBurst> => {
    const [f, d] = await Promise.all([
      runWrk(origin, fast, { connections: FAST_CONNECTIONS, seconds: length }),
      runWrk(origin, deep, { connections: DEEP_CONNECTIONS, seconds: length }),
    ])
    const errors = f.errorStatuses + d.errorStatuses
    if (errors > 0) throw new Error(`split, ${label}: ${errors} answers with status ≥ 400`)
    return { fast: f, deep: d }
  }
  if (warmupSeconds > 0) for (const t of targets) await burst(t.origin, t.label, warmupSeconds)
  const bursts: SplitBurst[][] = []
  for (let round = 0; round < rounds; round++) {
    const row: SplitBurst[] = new Array(targets.length)
    for (let k = 0; k < targets.length; k++) {
      const index = (round + k) % targets.length
      const target = targets[index]!
      const b = await burst(target.origin, target.label, seconds)
      process.stderr.write(
        `  round ${round + 1} split, ${target.label}: fast ${Math.round(b.fast.rps)} req/s p99 ` +
          `${b.fast.p99Ms.toFixed(1)} ms, deep ${Math.round(b.deep.rps)} req/s p99 ${b.deep.p99Ms.toFixed(1)} ms\n`,
      )
      row[index] = b
    }
    bursts.push(row)
  }
  return { labels: targets.map((t) => t.label), bursts }
}

/** A Markdown table of the split load: each kind's req/s, p50 and p99 (medians of the rounds). */
function formatSplit({ labels, bursts }: { labels: string[]; bursts: SplitBurst[][] }): string {
  const ms = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1))
  const lines = [
    `Split load (${FAST_CONNECTIONS} connections of shows and first pages beside ${DEEP_CONNECTIONS} of deep pages, two wrk processes at once), medians of ${bursts.length} rounds:`,
    '',
    '| server | fast req/s | fast p50 / p99 ms | deep req/s | deep p50 / p99 ms | p99 per round, fast; deep |',
    '|---|---:|---|---:|---|---|',
  ]
  labels.forEach((label, i) => {
    const side = bursts.map((row) => row[i]!)
    const m = (pick: (b: SplitBurst) => number) => median(side.map(pick))
    const perRound = (pick: (b: SplitBurst) => number) => side.map((b) => ms(pick(b))).join(', ')
    lines.push(
      `| ${label} | ${Math.round(m((b) => b.fast.rps))} | ${ms(m((b) => b.fast.p50Ms))} / ${ms(m((b) => b.fast.p99Ms))} | ` +
        `${Math.round(m((b) => b.deep.rps))} | ${ms(m((b) => b.deep.p50Ms))} / ${ms(m((b) => b.deep.p99Ms))} | ` +
        `${perRound((b) => b.fast.p99Ms)}; ${perRound((b) => b.deep.p99Ms)} |`,
    )
  })
  const ratios = (pick: (b: SplitBurst) => number) =>
    bursts.map((row) => pick(row[0]!) / pick(row[1]!))
  const fmt = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(', ')
  lines.push(
    '',
    `${labels[0]} ÷ ${labels[1]} per round: fast p99 ${fmt(ratios((b) => b.fast.p99Ms))}; ` +
      `deep p99 ${fmt(ratios((b) => b.deep.p99Ms))}; fast req/s ${fmt(ratios((b) => b.fast.rps))}.`,
  )
  return lines.join('\n')
}
