/**
 * The list query grammar at 10^6 rows (`KILN_BENCH_ROWS`) on PostgreSQL: the demo's generated
 * API (bench/servers/rest-kiln.ts) beside hand-written node:http + pg floors, every server its
 * own child process, loaded by wrk in interleaved rounds (bench/http). The posts are spread
 * over 1,000 authors, half of them published; the run adds the index a filtered, sorted list
 * needs (`author_id, created_at, id`) to its scratch database.
 *
 * - filter + sort: `filter[author_id]=n&sort=-created_at` against the same query hand-written
 *   (bench/servers/query-floor.ts), with kiln's exact total (cached per filter) and without;
 * - cursor against offset: the page after 79,980 rows by `cursor=` and by `page=4000`;
 * - count strategies: `filter[published]=true` (half the table) with `count=estimated`, and
 *   with `count=exact` counted on every request (a server whose count cache is off) and cached;
 * - include: pages of 20 with and without `include=author`, and the PostgreSQL statements each
 *   request sends, counted in the server (`KILN_BENCH_COUNT_QUERIES`);
 * - deep offset: page 25,000 against the floor's (bench/servers/rest-floor.ts).
 *
 * `npm run bench -- query` (`--quick`: one short round). Needs wrk and PostgreSQL
 * (KILN_BENCH_DATABASE_URL, else KILN_TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres).
 */
import { loadavg } from 'node:os'
import pg from 'pg'
import { postsResource } from '../examples/demo/src/api/controllers/posts.ts'
import { cursorSecretOf, encodeCursor } from '../src/api/query/cursor.ts'
import { planListQuery } from '../src/api/query/plan.ts'
import {
  formatRatios,
  type HttpRequest,
  median,
  type Ratio,
  ratio,
  roundsFromEnv,
  runRounds,
  type ServerProcess,
  startServer,
} from './http/index.ts'
import type { BenchOptions } from './lib.ts'
import { randomIds } from './rest-api.ts'
import { createDemoDatabase } from './servers/demo-database.ts'

const PER_PAGE = 20
const AUTHORS = 1_000
const CURSOR_PAGE = 4_000
const DEEP_PAGE = 25_000
/** Sequential requests per side when counting statements. */
const COUNTED = 100

type Server = ServerProcess<{ port: number }>
const origin = (server: Server) => `http://127.0.0.1:${server.info.port}`
const filterKey = (name: string, op?: string) =>
  encodeURIComponent(op ? `filter[${name}][${op}]` : `filter[${name}]`)

export default async function run({ quick }: BenchOptions): Promise<string> {
  const rows = Number(process.env.KILN_BENCH_ROWS ?? 1_000_000)
  const options = roundsFromEnv(quick)
  const database = await createDemoDatabase(rows, { authors: AUTHORS })
  const servers: Server[] = []
  const out: string[] = []
  try {
    await addListIndex(database.url)
    const env = { DATABASE_URL: database.url }
    const start = (file: string, extra: Record<string, string> = {}) =>
      startServer<{ port: number }>(new URL(file, import.meta.url), { env: { ...env, ...extra } })
    const [kiln, kilnUncached, floor, restFloor] = await Promise.all([
      start('./servers/rest-kiln.ts', { KILN_BENCH_COUNT_QUERIES: '1' }),
      start('./servers/rest-kiln.ts', { KILN_BENCH_COUNT_TTL: '0' }),
      start('./servers/query-floor.ts'),
      start('./servers/rest-floor.ts'),
    ])
    servers.push(kiln, kilnUncached, floor, restFloor)
    const headers = { authorization: `Bearer ${database.apiKey}` }
    const api = (query: string): HttpRequest => ({ path: `/api/v1/posts?${query}`, headers })
    const get = async (server: Server, request: HttpRequest) => {
      const response = await fetch(`${origin(server)}${request.path}`, {
        headers: request.headers ?? {},
      })
      if (!response.ok) throw new Error(`${request.path}: ${response.status}`)
      return (await response.json()) as Record<string, unknown> & {
        data: Array<Record<string, unknown>>
        meta?: Record<string, unknown>
      }
    }
    const target = (label: string, server: Server, requests: HttpRequest[]) => ({
      label,
      origin: origin(server),
      pid: server.pid,
      requests,
    })
    const section = (title: string, ratios: Ratio[], notes: string[] = []) =>
      out.push(`### ${title}\n\n${formatRatios(ratios)}${notes.map((n) => `\n- ${n}`).join('')}`)
    const targets: string[] = []
    const verdict = (name: string, figure: string, met: boolean) =>
      targets.push(`| ${name} | ${figure} | ${met ? '**met**' : '**not met**'} |`)

    // (a) An indexed equality filter and a sort on an indexed column, against the same SQL.
    const authors = randomIds(AUTHORS, 2_000)
    const filtered = (extra: string) =>
      authors.map((a) => api(`${filterKey('author_id')}=${a}&sort=-created_at&per_page=20${extra}`))
    const floorFiltered = authors.map((a) => ({ path: `/posts?author_id=${a}` }))
    const kilnIds = (await get(kiln, filtered('')[0]!)).data.map((r) => String(r.id))
    const floorIds = (await get(floor, floorFiltered[0]!)).data.map((r) => String(r.id))
    if (kilnIds.join() !== floorIds.join() || kilnIds.length !== PER_PAGE)
      throw new Error(`filtered pages differ: ${kilnIds} vs ${floorIds}`)
    const filter = await runRounds(
      [
        target('kiln filter + sort (exact total)', kiln, filtered('')),
        target('kiln filter + sort (count=none)', kiln, filtered('&count=none')),
        target('floor filter + sort', floor, floorFiltered),
      ],
      options,
    )
    const filterRatio = ratio(filter, 'kiln filter + sort (exact total)', 'floor filter + sort')
    section('Indexed equality filter + sort on an indexed column', [
      filterRatio,
      ratio(filter, 'kiln filter + sort (count=none)', 'floor filter + sort'),
    ])
    verdict(
      'filter + sort ≥ 0.8× node:http + pg',
      `${filterRatio.median.toFixed(2)}× (${perRound(filterRatio)})`,
      filterRatio.median >= 0.8,
    )

    // (b) The page after 79,980 rows, by cursor and by offset: the same rows.
    const skipped = (CURSOR_PAGE - 1) * PER_PAGE
    const { fingerprint } = planListQuery(postsResource, new URLSearchParams('cursor=&per_page=20'))
    const cursor = encodeCursor(
      { values: [skipped], direction: 'next' },
      fingerprint,
      cursorSecretOf(postsResource),
    )
    const byCursor = api(`cursor=${cursor}&per_page=20`)
    const byOffset = api(`page=${CURSOR_PAGE}&per_page=20`)
    const cursorIds = (await get(kiln, byCursor)).data.map((r) => r.id)
    const offsetIds = (await get(kiln, byOffset)).data.map((r) => r.id)
    if (cursorIds.join() !== offsetIds.join() || cursorIds[0] !== skipped + 1)
      throw new Error(`cursor and offset pages differ: ${cursorIds} vs ${offsetIds}`)
    const paging = await runRounds(
      [
        target(`kiln cursor page ${CURSOR_PAGE}`, kiln, [byCursor]),
        target(`kiln offset page ${CURSOR_PAGE}`, kiln, [byOffset]),
      ],
      options,
    )
    const pagingRatio = ratio(
      paging,
      `kiln cursor page ${CURSOR_PAGE}`,
      `kiln offset page ${CURSOR_PAGE}`,
    )
    section(`Cursor against offset, page ${CURSOR_PAGE} (after ${skipped} rows)`, [pagingRatio])
    verdict(
      `cursor page ${CURSOR_PAGE} ≥ 10× offset page ${CURSOR_PAGE}`,
      `${pagingRatio.median.toFixed(2)}× (${perRound(pagingRatio)})`,
      pagingRatio.median >= 10,
    )

    // (c) count=estimated against count=exact, with a filter matching half the table.
    const half = `${filterKey('published')}=true&per_page=20`
    const estimated = await get(kiln, api(`${half}&count=estimated`))
    const exact = await get(kilnUncached, api(`${half}&count=exact`))
    const counts = await runRounds(
      [
        target('kiln count=estimated', kiln, [api(`${half}&count=estimated`)]),
        target('kiln count=exact, counted per request', kilnUncached, [api(`${half}&count=exact`)]),
        target('kiln count=exact, cached 5 s', kiln, [api(`${half}&count=exact`)]),
      ],
      options,
    )
    const countRatio = ratio(
      counts,
      'kiln count=estimated',
      'kiln count=exact, counted per request',
    )
    section(
      'Count strategies, filter matching half the table',
      [countRatio, ratio(counts, 'kiln count=estimated', 'kiln count=exact, cached 5 s')],
      [
        `estimated total ${String(estimated.meta?.total)} (${String(estimated.meta?.count)}), ` +
          `exact total ${String(exact.meta?.total)}`,
      ],
    )
    verdict(
      'count=estimated ≥ 5× count=exact (counted per request)',
      `${countRatio.median.toFixed(2)}× (${perRound(countRatio)})`,
      countRatio.median >= 5,
    )

    // (d) include=author on pages of 20: statements per request, and the rate.
    const pages = Array.from({ length: 500 }, (_, i) => i + 1)
    const plain = pages.map((p) => api(`page=${p}&per_page=20`))
    const included = pages.map((p) => api(`page=${p}&per_page=20&include=author`))
    const statements = async (requests: HttpRequest[]) => {
      const before = await get(kiln, { path: '/bench/queries' })
      for (const request of requests.slice(0, COUNTED)) await get(kiln, request)
      const after = await get(kiln, { path: '/bench/queries' })
      return (Number(after.queries) - Number(before.queries)) / COUNTED
    }
    const sample = (await get(kiln, included[1]!)).data
    if (!sample.every((r) => (r.author as { id?: unknown } | null)?.id === r.author_id))
      throw new Error('include=author did not attach each post’s author')
    // count=none on both sides: the cached total's occasional count(*) is not the include's.
    const uncounted = (requests: HttpRequest[]) =>
      requests.map((r) => ({ ...r, path: `${r.path}&count=none` }))
    const withoutInclude = await statements(uncounted(plain))
    const withInclude = await statements(uncounted(included))
    const include = await runRounds(
      [target('kiln page + include=author', kiln, included), target('kiln page', kiln, plain)],
      options,
    )
    const includeRatio = ratio(include, 'kiln page + include=author', 'kiln page')
    section(
      'include=author (belongs-to) on pages of 20',
      [includeRatio],
      [
        `PostgreSQL statements per request (${COUNTED} sequential requests each with count=none, ` +
          `counted in the server): ${withoutInclude.toFixed(2)} without include, ` +
          `${withInclude.toFixed(2)} with`,
      ],
    )
    verdict(
      'include of belongs-to on a page of 20 ≤ 1 extra round trip',
      `+${(withInclude - withoutInclude).toFixed(2)} statements per request; rate ` +
        `${includeRatio.median.toFixed(2)}× of the page without include (${perRound(includeRatio)})`,
      withInclude - withoutInclude <= 1,
    )

    // The deep offset page that once answered nothing within a burst.
    const deep = Math.min(DEEP_PAGE, Math.floor(rows / PER_PAGE / 2))
    const deepRounds = await runRounds(
      [
        target(`kiln offset page ${deep}`, kiln, [api(`page=${deep}&per_page=20`)]),
        target(`floor offset page ${deep}`, restFloor, [{ path: `/posts?page=${deep}` }]),
      ],
      options,
    )
    // One request at a time, the cached total expired before each: the count runs beside the
    // page read, so the answer takes about as long as with count=none.
    const latency = async (query: string, expire: boolean) => {
      const samples: number[] = []
      for (let i = 0; i < 3; i++) {
        if (expire) await new Promise((resolve) => setTimeout(resolve, 5_100))
        const started = performance.now()
        await get(kiln, api(query))
        samples.push(performance.now() - started)
      }
      return median(samples).toFixed(0)
    }
    const coldTotal = await latency(`page=${deep}&per_page=20`, true)
    const noTotal = await latency(`page=${deep}&per_page=20&count=none`, false)
    section(
      `Offset page ${deep} (after ${(deep - 1) * PER_PAGE} rows)`,
      [ratio(deepRounds, `kiln offset page ${deep}`, `floor offset page ${deep}`)],
      [
        `one request at a time (median of 3): ${coldTotal} ms with the cached total expired ` +
          `(an exact count(*) of the table runs), ${noTotal} ms with count=none`,
      ],
    )

    // What PostgreSQL itself spends on each query (EXPLAIN ANALYZE, best of 3).
    const sqlTimes = await executionTimes(database.url, {
      'filter + sort page': `select * from posts where author_id = 7 order by created_at desc, id desc limit 20`,
      [`offset page ${CURSOR_PAGE}`]: `select * from posts order by id limit 20 offset ${skipped}`,
      [`cursor page ${CURSOR_PAGE}`]: `select * from posts where id > ${skipped} order by id limit 21`,
      'count(*) where published': 'select count(*) from posts where published = true',
      'include=author of a page':
        'select * from users where id in (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21)',
      [`offset page ${deep}`]: `select * from posts order by id limit 20 offset ${(deep - 1) * PER_PAGE}`,
      'count(*) of the table': 'select count(*) from posts',
    })
    out.push(
      [
        '### PostgreSQL execution time per query (EXPLAIN ANALYZE, best of 3)',
        '',
        '| query | ms |',
        '|---|---:|',
        ...Object.entries(sqlTimes).map(([name, ms]) => `| ${name} | ${ms.toFixed(2)} |`),
      ].join('\n'),
    )

    out.unshift(
      [
        `${rows.toLocaleString('en-US')} posts over ${AUTHORS} authors; load average at the end ` +
          `${loadavg()[0]?.toFixed(1)}.`,
        '',
        '| target | figure (median; per round) | result |',
        '|---|---|---|',
        ...targets,
      ].join('\n'),
    )
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
    await database.drop()
  }
  return out.join('\n\n')
}

const perRound = (r: Ratio) => r.perRound.map((x) => x.toFixed(2)).join(', ')

/** Each query's best `Execution Time` of three EXPLAIN ANALYZE runs, in ms. */
async function executionTimes(
  url: string,
  queries: Record<string, string>,
): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const out: Record<string, number> = {}
    for (const [name, text] of Object.entries(queries)) {
      let best = Number.POSITIVE_INFINITY
      for (let i = 0; i < 3; i++) {
        const { rows } = await client.query(`explain (analyze, format json) ${text}`)
        const plan = rows[0]?.['QUERY PLAN'] as Array<{ 'Execution Time': number }>
        best = Math.min(best, plan[0]?.['Execution Time'] ?? Number.NaN)
      }
      out[name] = best
    }
    return out
  } finally {
    await client.end()
  }
}

/** The index a filtered, sorted list uses: the filter column, the sort column, the tie-breaker. */
async function addListIndex(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query('CREATE INDEX posts_author_created_idx ON posts (author_id, created_at, id)')
    await client.query('ANALYZE posts')
  } finally {
    await client.end()
  }
}
