/**
 * The scale series: the demo's generated REST API (bench/servers/rest-kiln.ts: API key + `api`
 * limiter in memory, limit raised) on PostgreSQL tables of 10^4, 10^5 and 10^6 posts, beside the
 * hand-written node:http + pg floor (bench/servers/rest-floor.ts) on the same table, each server
 * its own child process, loaded by wrk in interleaved rounds (bench/http). Per size: one post by
 * random id, page 1 with kiln's exact total against the same page with `count=none` and the
 * floor's page 1 without any count and with `count(*)` per request, and a page half-way into the table. Then local storage streaming
 * at growing file sizes beside plain fs streams (in process: no server involved).
 *
 * `npm run bench -- scale` (`--quick`: 10^4 and 10^5 rows, one short round). Needs wrk and
 * PostgreSQL (KILN_BENCH_DATABASE_URL, else KILN_TEST_DATABASE_URL, else
 * postgres://postgres@127.0.0.1:5432/postgres).
 */
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createStorage, local } from 'kilnjs/storage'
import {
  formatRatios,
  type HttpTarget,
  processRssMiB,
  type Ratio,
  ratio,
  roundsFromEnv,
  runRounds,
  startServer,
} from './http/index.ts'
import { type BenchOptions, type BenchResult, formatTable, measure } from './lib.ts'
import { randomIds } from './rest-api.ts'
import { createDemoDatabase } from './servers/demo-database.ts'

const PER_PAGE = 20
const power = (rows: number) => `10^${Math.round(Math.log10(rows))}`
const load = () => `load ${loadavg()[0]?.toFixed(1)}`

/** One table size: its servers up for the time of its rounds only. */
async function size(rows: number, quick: boolean): Promise<{ ratios: Ratio[]; rss: string }> {
  const database = await createDemoDatabase(rows)
  const env = { DATABASE_URL: database.url }
  const servers = await Promise.all([
    startServer<{ port: number }>(new URL('./servers/rest-kiln.ts', import.meta.url), { env }),
    startServer<{ port: number }>(new URL('./servers/rest-floor.ts', import.meta.url), { env }),
  ]).catch(async (error) => {
    await database.drop()
    throw error
  })
  const [kiln, floor] = servers as [(typeof servers)[0], (typeof servers)[0]]
  const auth = { authorization: `Bearer ${database.apiKey}` }
  const n = power(rows)
  const deep = Math.floor(rows / PER_PAGE / 2)
  const ids = randomIds(rows)
  const on = (server: typeof kiln, label: string, requests: HttpTarget['requests']) => ({
    label: `${n} ${label}`,
    origin: `http://127.0.0.1:${server.info.port}`,
    pid: server.pid,
    requests,
  })
  try {
    const result = await runRounds(
      [
        on(
          kiln,
          'kiln show',
          ids.map((id) => ({ path: `/api/v1/posts/${id}`, headers: auth })),
        ),
        on(
          floor,
          'floor show',
          ids.map((id) => ({ path: `/posts/${id}` })),
        ),
        on(kiln, 'kiln page 1 (exact total)', [
          { path: `/api/v1/posts?page=1&per_page=${PER_PAGE}`, headers: auth },
        ]),
        on(kiln, 'kiln page 1 (count=none)', [
          { path: `/api/v1/posts?page=1&per_page=${PER_PAGE}&count=none`, headers: auth },
        ]),
        on(floor, 'floor page 1, no count', [{ path: '/posts?page=1' }]),
        on(floor, 'floor page 1 + count(*)', [{ path: '/posts?page=1&count=1' }]),
        on(kiln, `kiln page ${deep}`, [
          { path: `/api/v1/posts?page=${deep}&per_page=${PER_PAGE}`, headers: auth },
        ]),
        on(floor, `floor page ${deep}`, [{ path: `/posts?page=${deep}` }]),
      ],
      roundsFromEnv(quick),
    )
    const rss = `${n}: kiln ${processRssMiB(kiln.pid).toFixed(0)} MiB, floor ${processRssMiB(floor.pid).toFixed(0)} MiB`
    return {
      ratios: [
        ratio(result, `${n} kiln show`, `${n} floor show`),
        ratio(result, `${n} kiln page 1 (exact total)`, `${n} kiln page 1 (count=none)`),
        ratio(result, `${n} kiln page 1 (exact total)`, `${n} floor page 1, no count`),
        ratio(result, `${n} floor page 1 + count(*)`, `${n} floor page 1, no count`),
        ratio(result, `${n} kiln page ${deep}`, `${n} floor page ${deep}`),
      ],
      rss,
    }
  } finally {
    await Promise.all(servers.map((s) => s.stop()))
    await database.drop()
  }
}

export default async function run({ quick }: BenchOptions): Promise<string> {
  const sizes = quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000]
  const ratios: Ratio[] = []
  const rss: string[] = []
  for (const rows of sizes) {
    const measured = await size(rows, quick)
    ratios.push(...measured.ratios)
    rss.push(measured.rss)
  }
  const streams = await streaming(quick)
  return [
    formatRatios(ratios),
    `Server RSS after the rounds: ${rss.join('; ')}.`,
    '### Storage streaming (in process)',
    formatTable(streams),
    streams.map((r) => `- ${r.name}: ${r.notes}`).join('\n'),
  ].join('\n\n')
}

/**
 * Local storage streaming at growing sizes: `getStream` against `fs.createReadStream`, and
 * `put` of a stream against `pipeline` into `fs.createWriteStream`, both into a sink that drops
 * the bytes. Runs in this process (no server involved).
 */
async function streaming(quick: boolean): Promise<BenchResult[]> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-bench-scale-'))
  const storage = createStorage({
    default: 'local',
    disks: { local: { driver: local(join(dir, 'disk')) } },
  })
  const rounds = quick ? 2 : 6
  const durationMs = quick ? 300 : 1_000
  const results: BenchResult[] = []
  const sink = () =>
    new Writable({
      write(_chunk, _encoding, callback) {
        callback()
      },
    })
  try {
    const sizes: Array<[string, number]> = [
      ['1 MiB', 2 ** 20],
      ['16 MiB', 16 * 2 ** 20],
      ['128 MiB', 128 * 2 ** 20],
    ]
    for (const [label, size] of quick ? sizes.slice(0, 2) : sizes) {
      const content = Buffer.alloc(size, 97)
      const source = join(dir, `source-${size}.bin`)
      const plain = join(dir, `plain-${size}.bin`)
      await writeFile(source, content)
      await writeFile(plain, content)
      const path = `stream/file-${size}.bin`
      await storage.put(path, content)
      const get = await compareInProcess(
        async () => pipeline(await storage.getStream(path), sink()),
        () => pipeline(createReadStream(plain), sink()),
        rounds,
        durationMs,
      )
      results.push({
        name: `storage getStream ${label}`,
        baseline: 'fs.createReadStream',
        ...get,
        notes: `${((get.ops * size) / 2 ** 20).toFixed(0)} MiB/s; ${load()}`,
      })
      const put = await compareInProcess(
        () => storage.put(path, createReadStream(source)),
        () => pipeline(createReadStream(source), createWriteStream(plain)),
        rounds,
        durationMs,
      )
      results.push({
        name: `storage put (stream) ${label}`,
        baseline: 'pipeline to fs.createWriteStream',
        ...put,
        notes: `${((put.ops * size) / 2 ** 20).toFixed(0)} MiB/s; kiln writes a temporary file and renames it; ${load()}`,
      })
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
  return results
}

async function compareInProcess(
  subject: () => Promise<unknown>,
  baseline: () => Promise<unknown>,
  rounds: number,
  durationMs: number,
): Promise<{ ops: number; baselineOps: number; ratio: number }> {
  await measure(subject, 200)
  await measure(baseline, 200)
  let s = { count: 0, ms: 0 }
  let b = { count: 0, ms: 0 }
  const add = (into: typeof s, r: typeof s) => ({ count: into.count + r.count, ms: into.ms + r.ms })
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      s = add(s, await measure(subject, durationMs))
      b = add(b, await measure(baseline, durationMs))
    } else {
      b = add(b, await measure(baseline, durationMs))
      s = add(s, await measure(subject, durationMs))
    }
  }
  const ops = (s.count / s.ms) * 1000
  const baselineOps = (b.count / b.ms) * 1000
  return { ops, baselineOps, ratio: ops / baselineOps }
}
