/**
 * The tail at equal offered load: the demo's generated API (bench/servers/rest-kiln.ts) beside
 * the hand-written floor (bench/servers/rest-floor.ts, node:http + pg) on the same 100,000
 * posts, for a show and for page 1 of 20 without a count, and with `KILN_BENCH_BEFORE=<ref>`
 * the demo API at that commit in the same rounds. Each kind runs its closed-loop rounds (how
 * much each server answers), then as many paced rounds (`runRounds`): every server offered the
 * same rate, 60% of the slowest's closed-loop rate, so the p99 compared is each server's own
 * answer time at the same load, not a measure of how many requests it was sent.
 *
 * The target (docs/performance.md): kiln's p99 at most `P99_BOUND` × the floor's in at least
 * four of five paced rounds, with closed-loop throughput kept.
 *
 * `KILN_BENCH_VARIANTS` adds the demo API again under other settings, to find what moves the
 * tail: `label:KEY=value,KEY=value;label:…`, each KEY an environment variable of the server
 * (bench/servers/rest-kiln.ts) or `flags` (Node flags, space-separated), e.g.
 * `KILN_BENCH_VARIANTS='semi 16:flags=--max-semi-space-size=16;pooled:KILN_BENCH_PIPELINE=0'`.
 * Each variant is compared with the floor and with kiln as it is.
 *
 * `npm run bench -- equal-load` (`--quick`: one short round). Needs wrk and PostgreSQL.
 */
import {
  formatPaced,
  type HttpRequest,
  type HttpTarget,
  median,
  type Ratio,
  ratio,
  roundsFromEnv,
  runRounds,
  startServer,
} from './http/index.ts'
import type { BenchOptions } from './lib.ts'
import { checkoutBefore, randomIds } from './rest-api.ts'
import { createDemoDatabase } from './servers/demo-database.ts'

const PER_PAGE = 20

interface Variant {
  label: string
  env: Record<string, string>
  execArgv: string[]
}

/** KILN_BENCH_VARIANTS, parsed (see the file comment). */
function variantsFromEnv(): Variant[] {
  const spec = process.env.KILN_BENCH_VARIANTS ?? ''
  return spec
    .split(';')
    .filter((part) => part.trim() !== '')
    .map((part) => {
      const [label, settings = ''] = part.split(/:(.*)/s) as [string, string?]
      const pairs = settings
        .split(',')
        .filter(Boolean)
        .map((pair) => pair.split(/=(.*)/s) as [string, string])
      const flags = pairs.find(([key]) => key === 'flags')?.[1] ?? ''
      return {
        label: label.trim(),
        env: Object.fromEntries(pairs.filter(([key]) => key !== 'flags')),
        execArgv: flags.split(' ').filter(Boolean),
      }
    })
}
/** kiln's p99 over the floor's at equal offered load, at most (issue: the tail at equal load). */
export const P99_BOUND = 1.2

interface Side {
  label: string
  pid: number
  origin: string
  /** The path each kind of request takes on this server. */
  show: (id: number) => string
  page: string
  headers?: Record<string, string>
}

export default async function run({ quick }: BenchOptions): Promise<string> {
  const rows = Number(process.env.KILN_BENCH_ROWS ?? 100_000)
  const ref = process.env.KILN_BENCH_BEFORE
  const database = await createDemoDatabase(rows)
  const before = ref ? checkoutBefore(ref) : undefined
  const env = { DATABASE_URL: database.url }
  const variants = variantsFromEnv()
  const servers = await Promise.all([
    startServer<{ port: number }>(new URL('./servers/rest-kiln.ts', import.meta.url), { env }),
    startServer<{ port: number }>(new URL('./servers/rest-floor.ts', import.meta.url), { env }),
    ...(before
      ? [
          // From its own directory, so its `kilnjs/*` imports are that commit's code too.
          startServer<{ port: number }>(`${before.dir}/bench/servers/rest-kiln.ts`, {
            env,
            cwd: before.dir,
          }),
        ]
      : []),
    ...variants.map((variant) =>
      startServer<{ port: number }>(new URL('./servers/rest-kiln.ts', import.meta.url), {
        env: { ...env, ...variant.env },
        execArgv: variant.execArgv,
      }),
    ),
  ])
  const headers = { authorization: `Bearer ${database.apiKey}` }
  const api = {
    show: (id: number) => `/api/v1/posts/${id}`,
    page: `/api/v1/posts?page=1&per_page=${PER_PAGE}&count=none`,
    headers,
  }
  const origin = (i: number) => ({
    pid: servers[i]!.pid,
    origin: `http://127.0.0.1:${servers[i]!.info.port}`,
  })
  const sides: Side[] = [
    { label: 'kiln', ...origin(0), ...api },
    { label: 'floor', ...origin(1), show: (id) => `/posts/${id}`, page: '/posts?page=1' },
    ...(ref ? [{ label: `kiln at ${ref}`, ...origin(2), ...api }] : []),
    ...variants.map((variant, i) => ({
      label: `kiln, ${variant.label}`,
      ...origin(i + (ref ? 3 : 2)),
      ...api,
    })),
  ]
  const ids = randomIds(rows)
  const kinds: Record<string, (side: Side) => HttpRequest[]> = {
    show: (side) => ids.map((id) => ({ path: side.show(id), headers: side.headers ?? {} })),
    'page 1, no count': (side) => [{ path: side.page, headers: side.headers ?? {} }],
  }
  try {
    const sections: string[] = []
    for (const [kind, requests] of Object.entries(kinds)) {
      const targets: HttpTarget[] = sides.map((side) => ({
        label: `${kind}: ${side.label}`,
        pid: side.pid,
        origin: side.origin,
        requests: requests(side),
      }))
      const result = await runRounds(targets, roundsFromEnv(quick))
      const pairs = [ratio(result, `${kind}: kiln`, `${kind}: floor`)]
      if (ref) pairs.push(ratio(result, `${kind}: kiln`, `${kind}: kiln at ${ref}`))
      for (const { label } of variants) {
        pairs.push(ratio(result, `${kind}: kiln, ${label}`, `${kind}: floor`))
        pairs.push(ratio(result, `${kind}: kiln, ${label}`, `${kind}: kiln`))
      }
      sections.push(...pairs.map(row))
    }
    return [
      `${rows.toLocaleString('en-US')} posts, 50 connections; the paced rounds offer every server ` +
        'the same rate (60% of the slowest closed-loop rate). Within bound: paced rounds where ' +
        `the p99 ratio is at most ${P99_BOUND}.`,
      '',
      '| request | subject ÷ baseline | equal offered load: p99 ratio (per round), p50 / p99 ms | within bound | closed loop: req/s ratio (per round) | closed-loop p50 / p99 ms | CPU µs/req |',
      '|---|---|---|---|---|---|---|',
      ...sections,
    ].join('\n')
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
    before?.remove()
    await database.drop()
  }
}

function row(r: Ratio): string {
  const ms = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1))
  const [kind, subject] = r.subject.split(': ') as [string, string]
  const baseline = r.baseline.split(': ')[1]
  const within = r.paced?.p99PerRound.filter((x) => x <= P99_BOUND).length ?? 0
  return (
    `| ${kind} | ${subject} ÷ ${baseline} | ${formatPaced(r.paced)} | ` +
    `${within} of ${r.paced?.p99PerRound.length ?? 0} | ` +
    `**${median(r.perRound).toFixed(2)}×** (${r.perRound.map((x) => x.toFixed(2)).join(', ')}) | ` +
    `${ms(r.subjectP50Ms)} / ${ms(r.subjectP99Ms)} vs ${ms(r.baselineP50Ms)} / ${ms(r.baselineP99Ms)} | ` +
    `${r.subjectCpuUs.toFixed(0)} vs ${r.baselineCpuUs.toFixed(0)} |`
  )
}
