/**
 * The tail with slow queries mixed into fast ones: the demo's generated REST API
 * (bench/servers/rest-kiln.ts) on 100,000 posts, once with its pipelined connections (kiln's
 * default, 4) and once with `pipelineConnections: 0` (a pooled connection per query), each its
 * own child process, loaded by wrk in interleaved rounds (bench/http). The mixed load: of every
 * 20 requests, 9 shows of a random post, 9 first pages and 2 deep offset pages (a scan of
 * 80,000 rows each). Then the fast path alone (shows), to see what pipelining gives there.
 * The deep pages are what the list planner calls slow (`pageMayBeSlow`): the pipelined server
 * runs them on pooled connections under the query budget, its shows and first pages pipelined.
 * The target: the mixed load's p99 at most 1.2× the pooled server's (`P99_BOUND`).
 *
 * `npm run bench -- tail` (`--quick`: 10^4 rows, one short round). Needs wrk and PostgreSQL
 * (KILN_BENCH_DATABASE_URL, else KILN_TEST_DATABASE_URL, else
 * postgres://postgres@127.0.0.1:5432/postgres).
 */
import {
  formatRatios,
  type HttpRequest,
  ratio,
  roundsFromEnv,
  runRounds,
  startServer,
} from './http/index.ts'
import type { BenchOptions } from './lib.ts'
import { randomIds } from './rest-api.ts'
import { createDemoDatabase } from './servers/demo-database.ts'

const PER_PAGE = 20
/** The tail's target: the pipelined server's mixed p99 over the pooled one's, at most. */
const P99_BOUND = 1.2

export default async function run({ quick }: BenchOptions): Promise<string> {
  const rows = quick ? 10_000 : 100_000
  const database = await createDemoDatabase(rows)
  const server = (pipeline: string) =>
    startServer<{ port: number }>(new URL('./servers/rest-kiln.ts', import.meta.url), {
      env: { DATABASE_URL: database.url, KILN_BENCH_PIPELINE: pipeline },
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
  const on = (target: typeof pipelined, label: string, requests: HttpRequest[]) => ({
    label,
    origin: `http://127.0.0.1:${target.info.port}`,
    pid: target.pid,
    requests,
  })
  try {
    const result = await runRounds(
      [
        on(pipelined, 'mixed, pipelined (4)', mixed),
        on(pooled, 'mixed, pipelineConnections: 0', mixed),
        on(pipelined, 'shows, pipelined (4)', shows),
        on(pooled, 'shows, pipelineConnections: 0', shows),
      ],
      roundsFromEnv(quick),
    )
    const mixedRatio = ratio(result, 'mixed, pipelined (4)', 'mixed, pipelineConnections: 0')
    const showRatio = ratio(result, 'shows, pipelined (4)', 'shows, pipelineConnections: 0')
    // p99 of the pipelined server over the pooled one's, round by round.
    const p99PerRound = result.bursts.map((row) => {
      const [subject, baseline] = [row[0], row[1]]
      return subject && baseline ? subject.p99Ms / baseline.p99Ms : Number.NaN
    })
    const within = p99PerRound.filter((x) => x <= P99_BOUND).length
    return [
      formatRatios([mixedRatio, showRatio]),
      `Mixed load, p99 pipelined ÷ p99 pooled per round: ${p99PerRound.map((x) => x.toFixed(2)).join(', ')} ` +
        `(deep page: ${deep}, ${rows.toLocaleString('en-US')} posts); ` +
        `within ${P99_BOUND}× in ${within} of ${p99PerRound.length} rounds.`,
    ].join('\n\n')
  } finally {
    await Promise.all(servers.map((s) => s.stop()))
    await database.drop()
  }
}
