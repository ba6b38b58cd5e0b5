/**
 * The demo's generated API against itself at an earlier commit, in the same interleaved rounds:
 * a show, page 1 (with its exact total), a filtered and sorted page, a deep page and a write
 * (`PATCH` of one record), each answered by both servers on the same 100,000 posts. Throughput
 * ratio per round, p50/p99 and server CPU per request on both sides: what a change cost or
 * saved on each kind of request, measured beside the code it changed.
 *
 * `KILN_BENCH_BEFORE=<git ref>` names the earlier commit (default `6da85d1`, before the
 * resource definition); it is checked out as `rest-api` checks it out (its `src/` and demo with
 * this checkout's bench/ and node_modules). `npm run bench -- before-after` (`--quick`: one
 * short round). Needs wrk and PostgreSQL.
 */
import {
  formatPaced,
  type HttpRequest,
  type HttpTarget,
  type Ratio,
  ratio,
  roundsFromEnv,
  runRounds,
  startServer,
} from './http/index.ts'
import type { BenchOptions } from './lib.ts'
import { checkoutBefore, randomIds } from './rest-api.ts'
import { createDemoDatabase } from './servers/demo-database.ts'

const AUTHORS = 100
const PER_PAGE = 20

/** The requests of each kind, the same sequence for both sides. */
function requestsOf(rows: number, auth: Record<string, string>): Record<string, HttpRequest[]> {
  const ids = randomIds(rows)
  const deep = Math.min(4000, Math.floor(rows / PER_PAGE))
  const get = (path: string): HttpRequest => ({ path: `/api/v1/posts${path}`, headers: auth })
  return {
    show: ids.map((id) => get(`/${id}`)),
    'page 1': [get(`?page=1&per_page=${PER_PAGE}`)],
    'filtered page': ids
      .slice(0, 500)
      .map((id) =>
        get(`?filter[author_id]=${1 + (id % AUTHORS)}&sort=-created_at&per_page=${PER_PAGE}`),
      ),
    [`page ${deep}`]: [get(`?page=${deep}&per_page=${PER_PAGE}`)],
    write: ids.slice(0, 2_000).map((id) => ({
      method: 'PATCH',
      path: `/api/v1/posts/${id}`,
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ title: `Post ${id}` }),
    })),
  }
}

export default async function run({ quick }: BenchOptions): Promise<string> {
  const rows = Number(process.env.KILN_BENCH_ROWS ?? 100_000)
  const ref = process.env.KILN_BENCH_BEFORE ?? '6da85d1'
  const options = roundsFromEnv(quick)
  const database = await createDemoDatabase(rows, { authors: AUTHORS })
  const before = checkoutBefore(ref)
  const env = { DATABASE_URL: database.url }
  const servers = await Promise.all([
    startServer<{ port: number }>(new URL('./servers/rest-kiln.ts', import.meta.url), { env }),
    // From its own directory, so its `kilnjs/*` imports are that commit's code too.
    startServer<{ port: number }>(`${before.dir}/bench/servers/rest-kiln.ts`, {
      env,
      cwd: before.dir,
    }),
  ])
  try {
    const [now, then] = servers.map((s) => ({
      pid: s.pid,
      origin: `http://127.0.0.1:${s.info.port}`,
    }))
    const auth = { authorization: `Bearer ${database.apiKey}` }
    const lines: string[] = []
    for (const [kind, requests] of Object.entries(requestsOf(rows, auth))) {
      const targets: HttpTarget[] = [
        { label: `${kind}, now`, ...now!, requests },
        { label: `${kind}, at ${ref}`, ...then!, requests },
      ]
      const result = await runRounds(targets, options)
      lines.push(row(ratio(result, `${kind}, now`, `${kind}, at ${ref}`)))
    }
    return [
      `${rows.toLocaleString('en-US')} posts; now against ${ref}, each kind in its own rounds`,
      '',
      '| request | ratio (median) | per round | req/s | p50 / p99 ms | server CPU µs/req | load | equal offered load: p99 ratio (per round), p50 / p99 ms |',
      '|---|---:|---|---:|---|---|---|---|',
      ...lines,
    ].join('\n')
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
    before.remove()
    await database.drop()
  }
}

function row(r: Ratio): string {
  const ms = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1))
  const kind = r.subject.replace(/, now$/, '')
  return (
    `| ${kind} | **${r.median.toFixed(2)}×** | ${r.perRound.map((x) => x.toFixed(2)).join(', ')} | ` +
    `${Math.round(r.subjectRps)} vs ${Math.round(r.baselineRps)} | ` +
    `${ms(r.subjectP50Ms)} / ${ms(r.subjectP99Ms)} vs ${ms(r.baselineP50Ms)} / ${ms(r.baselineP99Ms)} | ` +
    `${r.subjectCpuUs.toFixed(0)} vs ${r.baselineCpuUs.toFixed(0)} | ${r.loads.map((x) => x.toFixed(1)).join(', ')} | ` +
    `${formatPaced(r.paced)} |`
  )
}
