/**
 * The scale series: the demo's generated REST API (`examples/demo/src/api`, API-key auth and the
 * `api` limiter on, limit raised) on Postgres tables of 10^4, 10^5 and 10^6 `posts`, each figure
 * beside a hand-written node:http + pg handler running the same query in the same run, and local
 * storage streaming at growing file sizes beside plain fs streams.
 *
 * All servers run in one child process (this file, started again with a role variable), so the
 * benchmark process is only the load generator and the child's CPU time and RSS can be read
 * from /proc (Linux) per round. Every table lives in its own scratch database, created, seeded
 * with one `INSERT … SELECT generate_series` and dropped at the end; all three stay up for the
 * whole run, so "page 1 at 10^6 rows vs page 1 at 10^4 rows" is measured side by side too.
 *
 * `npm run bench -- scale` (`--quick`: 10^4 and 10^5 rows, short rounds). PostgreSQL from
 * KILN_BENCH_DATABASE_URL, else KILN_TEST_DATABASE_URL, else
 * postgres://postgres@127.0.0.1:5432/postgres.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createReadStream, createWriteStream, readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { Agent, createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { fileURLToPath } from 'node:url'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { createStorage, local } from 'kiln/storage'
import pg from 'pg'
import { apiRoutes } from '../examples/demo/src/api/index.ts'
import { hashPassword } from '../examples/demo/src/auth/passwords.ts'
import { createApiKey, createDatabaseApiKeyProvider, createRateLimiters } from '../src/api/index.ts'
import { errorHandler, silentLogger } from '../src/core/index.ts'
import { createDatabase, migrate } from '../src/db/index.ts'
import { type BenchOptions, type BenchResult, getJson, measure } from './lib.ts'

const ROLE = 'KILN_BENCH_SCALE_SERVER'
const POOL = 10
const CONCURRENCY = 32
const PER_PAGE = 20

interface Table {
  rows: number
  url: string
  key: string
}
interface Ports {
  kiln: number
  raw: number
}

// ---- the servers (child process) ----

async function serveAll(tables: Table[]): Promise<Ports[]> {
  // One limiter set for every app, as in one process of the demo: memory, limit raised.
  const limiters = createRateLimiters({ limiters: { api: { points: 1_000_000_000 } } })
  const ports: Ports[] = []
  for (const table of tables) {
    const database = await createDatabase(table.url, { poolMax: POOL })
    if (database.dialect !== 'postgres') throw new TypeError('expected a Postgres database')
    const apiKeys = createDatabaseApiKeyProvider({ database, logger: silentLogger() })
    const app = new Hono()
    app.onError(errorHandler({ logger: silentLogger() }))
    app.route('/', apiRoutes({ database, apiKeys, limiters, hashPassword, logger: silentLogger() }))
    const kiln = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server
    const pool = new pg.Pool({ connectionString: table.url, max: POOL })
    pool.on('error', () => {})
    const raw = handWritten(pool)
    ports.push({ kiln: await listening(kiln), raw: await listening(raw) })
  }
  return ports
}

function listening(server: Server): Promise<number> {
  return new Promise((resolve) => {
    const done = () => resolve((server.address() as AddressInfo).port)
    if (server.listening) done()
    else server.once('listening', done)
  })
}

/**
 * The floor: parse the URL, run the query, write JSON. No auth, no limits, no validation.
 * `/posts/:id`, `/posts?page=n`, and `/posts?page=n&count=1`, which also runs `count(*)` beside
 * the page (a `total` paid on every request, as without a cache).
 */
function handWritten(pool: pg.Pool): Server {
  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://x')
      const one = /^\/posts\/(\d+)$/.exec(url.pathname)
      let body: unknown
      if (one) {
        const query = { text: 'select * from posts where id = $1', values: [Number(one[1])] }
        const named = url.searchParams.has('prepared') ? { name: 'raw_show' } : {}
        const { rows } = await pool.query({ ...query, ...named })
        body = { data: rows[0] }
      } else {
        const page = Number(url.searchParams.get('page') ?? 1)
        const list = pool.query(`select * from posts order by id limit ${PER_PAGE} offset $1`, [
          (page - 1) * PER_PAGE,
        ])
        if (url.searchParams.has('count')) {
          const [{ rows }, count] = await Promise.all([
            list,
            pool.query('select count(*)::int as total from posts'),
          ])
          body = { data: rows, total: count.rows[0]?.total }
        } else {
          body = { data: (await list).rows }
        }
      }
      const json = JSON.stringify(body)
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(json),
      })
      res.end(json)
    } catch {
      res.writeHead(500).end()
    }
  })
  server.listen(0, '127.0.0.1')
  return server
}

if (process.env[ROLE]) {
  const tables = JSON.parse(process.env[ROLE]) as Table[]
  const ports = await serveAll(tables)
  process.send?.(ports)
  process.on('disconnect', () => process.exit(0))
}

// ---- the load generator (benchmark process) ----

/** CPU time (user + system) of a process so far in µs, and its resident set in bytes. */
function procStats(pid: number): { cpuUs: number; rss: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const ticks = Number(fields[11]) + Number(fields[12]) // utime, stime (fields 14 and 15)
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const rssKb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0)
  return { cpuUs: (ticks * 1e6) / 100, rss: rssKb * 1024 }
}

interface Measured {
  ops: number
  baselineOps: number
  ratio: number
  cpuUs: number
  baselineCpuUs: number
  rssMiB: number
}

/**
 * Like `compare` in lib.ts (a warm-up of each side, then alternating rounds) and also the
 * server process's CPU time per request on each side and its RSS at the end.
 */
async function compareServer(
  pid: number,
  subject: () => Promise<unknown>,
  baseline: () => Promise<unknown>,
  rounds: number,
  durationMs: number,
): Promise<Measured> {
  const side = async (fn: () => Promise<unknown>, ms: number) => {
    const before = procStats(pid).cpuUs
    const { count, ms: elapsed } = await measure(fn, ms, CONCURRENCY)
    return { count, ms: elapsed, cpuUs: procStats(pid).cpuUs - before }
  }
  await side(subject, Math.min(500, durationMs))
  await side(baseline, Math.min(500, durationMs))
  const s = { count: 0, ms: 0, cpuUs: 0 }
  const b = { count: 0, ms: 0, cpuUs: 0 }
  const add = (into: typeof s, r: typeof s) => {
    into.count += r.count
    into.ms += r.ms
    into.cpuUs += r.cpuUs
  }
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      add(s, await side(subject, durationMs))
      add(b, await side(baseline, durationMs))
    } else {
      add(b, await side(baseline, durationMs))
      add(s, await side(subject, durationMs))
    }
  }
  const ops = (s.count / s.ms) * 1000
  const baselineOps = (b.count / b.ms) * 1000
  return {
    ops,
    baselineOps,
    ratio: ops / baselineOps,
    cpuUs: s.cpuUs / s.count,
    baselineCpuUs: b.cpuUs / b.count,
    rssMiB: procStats(pid).rss / 2 ** 20,
  }
}

const power = (rows: number) => `10^${Math.round(Math.log10(rows))}`
const load = () => `load ${loadavg()[0]?.toFixed(1)}`

export default async function run({ quick }: BenchOptions): Promise<BenchResult[]> {
  const adminUrl =
    process.env.KILN_BENCH_DATABASE_URL ||
    process.env.KILN_TEST_DATABASE_URL ||
    'postgres://postgres@127.0.0.1:5432/postgres'
  const sizes = quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000]
  const rounds = quick ? 2 : 6
  const durationMs = quick ? 500 : 2_000
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  const names: string[] = []
  let child: ChildProcess | undefined
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY * 2 })
  const results: BenchResult[] = []
  try {
    const tables: Table[] = []
    for (const rows of sizes) {
      const name = `kiln_bench_scale_${randomBytes(4).toString('hex')}`
      await admin.query(`CREATE DATABASE "${name}"`)
      names.push(name)
      const url = new URL(adminUrl)
      url.pathname = `/${name}`
      tables.push({ rows, url: url.toString(), key: await prepare(url.toString(), rows) })
    }
    child = fork(fileURLToPath(import.meta.url), [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, [ROLE]: JSON.stringify(tables) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    const server = child
    const ports = await new Promise<Ports[]>((resolve, reject) => {
      server.once('message', (message) => resolve(message as Ports[]))
      server.once('exit', (code) => reject(new Error(`benchmark server exited with ${code}`)))
    })
    const pid = server.pid as number
    const row = (label: string, baseline: string, m: Measured, notes: string): BenchResult => ({
      name: label,
      baseline,
      ops: m.ops,
      baselineOps: m.baselineOps,
      ratio: m.ratio,
      notes: `${notes}; server CPU per request ${m.cpuUs.toFixed(0)} µs vs ${m.baselineCpuUs.toFixed(0)} µs; server RSS ${m.rssMiB.toFixed(0)} MiB; ${load()}`,
    })
    const floor = 'node:http + pg, same query'

    for (const [index, table] of tables.entries()) {
      const port = ports[index] as Ports
      const headers = { authorization: `Bearer ${table.key}` }
      const kiln = (path: string) => () => getJson(agent, port.kiln, path, headers)
      const raw = (path: string) => () => getJson(agent, port.raw, path)
      const size = power(table.rows)
      const randomId = () => 1 + Math.floor(Math.random() * table.rows)
      const deepPage = Math.floor(table.rows / PER_PAGE / 2)
      // Both sides answer, and kiln's envelope counts the whole table, before anything is timed.
      const first = (await kiln(`/api/v1/posts?page=1&per_page=${PER_PAGE}`)()) as {
        meta: { total: number }
      }
      if (first.meta.total !== table.rows) {
        throw new Error(`${size}: total ${first.meta.total}, expected ${table.rows}`)
      }
      await raw('/posts?page=1')()

      const show = await compareServer(
        pid,
        () => getJson(agent, port.kiln, `/api/v1/posts/${randomId()}`, headers),
        () => getJson(agent, port.raw, `/posts/${randomId()}`),
        rounds,
        durationMs,
      )
      results.push(row(`${size} rows: GET /api/v1/posts/{id}`, floor, show, 'a random id'))
      // kiln's handlers run named prepared statements; a floor that does too, for fairness.
      const showPrepared = await compareServer(
        pid,
        () => getJson(agent, port.kiln, `/api/v1/posts/${randomId()}`, headers),
        () => getJson(agent, port.raw, `/posts/${randomId()}?prepared=1`),
        rounds,
        durationMs,
      )
      results.push(
        row(
          `${size} rows: GET /api/v1/posts/{id}`,
          'node:http + pg, same query, named prepared statement',
          showPrepared,
          'a random id',
        ),
      )
      const page1 = await compareServer(
        pid,
        kiln(`/api/v1/posts?page=1&per_page=${PER_PAGE}`),
        raw('/posts?page=1'),
        rounds,
        durationMs,
      )
      results.push(
        row(
          `${size} rows: GET page 1`,
          floor,
          page1,
          "kiln's envelope has the exact total (record counter)",
        ),
      )
      const deep = await compareServer(
        pid,
        kiln(`/api/v1/posts?page=${deepPage}&per_page=${PER_PAGE}`),
        raw(`/posts?page=${deepPage}`),
        rounds,
        durationMs,
      )
      results.push(
        row(
          `${size} rows: GET page ${deepPage.toLocaleString('en-US')}`,
          floor,
          deep,
          `offset ${((deepPage - 1) * PER_PAGE).toLocaleString('en-US')}`,
        ),
      )
      const counted = await compareServer(
        pid,
        raw('/posts?page=1&count=1'),
        raw('/posts?page=1'),
        rounds,
        durationMs,
      )
      results.push(
        row(
          `${size} rows: page 1 + count(*) per request (hand-written)`,
          'the same page without count',
          counted,
          'what an uncached total costs',
        ),
      )
    }

    // Page 1 on the largest table against page 1 on the smallest, side by side.
    const small = tables[0] as Table
    const large = tables[tables.length - 1] as Table
    const smallPort = (ports[0] as Ports).kiln
    const largePort = (ports[tables.length - 1] as Ports).kiln
    const growth = await compareServer(
      pid,
      () =>
        getJson(agent, largePort, `/api/v1/posts?page=1&per_page=${PER_PAGE}`, {
          authorization: `Bearer ${large.key}`,
        }),
      () =>
        getJson(agent, smallPort, `/api/v1/posts?page=1&per_page=${PER_PAGE}`, {
          authorization: `Bearer ${small.key}`,
        }),
      rounds,
      durationMs,
    )
    results.push(
      row(
        `kiln GET page 1 at ${power(large.rows)} rows`,
        `kiln GET page 1 at ${power(small.rows)} rows`,
        growth,
        `latency grows ${(1 / growth.ratio).toFixed(2)}× (target < 2×)`,
      ),
    )

    results.push(...(await streaming(quick)))
    return results
  } finally {
    agent.destroy()
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve))
      child.kill()
      await exited
    }
    for (const name of names) await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
    await admin.end()
  }
}

/** Migrates, seeds `rows` posts in one statement, and makes an API key; returns the raw key. */
async function prepare(url: string, rows: number): Promise<string> {
  const database = await createDatabase(url, { poolMax: 2 })
  try {
    await migrate(database, {
      appMigrationsDir: fileURLToPath(new URL('../examples/demo/migrations', import.meta.url)),
    })
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      await client.query(
        `INSERT INTO users (email, name, password_hash) VALUES ('bench@example.com', 'Bench', 'x')`,
      )
      await client.query(
        `INSERT INTO posts (title, body, published, token_count, author_id)
         SELECT 'Post ' || n, repeat('lorem ipsum ', 20), n % 2 = 0, n % 1000, 1
         FROM generate_series(1, ${rows}) AS n`,
      )
      await client.query('VACUUM ANALYZE posts')
    } finally {
      await client.end()
    }
    return (await createApiKey(database, { name: 'bench', scopes: ['*'] })).rawKey
  } finally {
    await database.close()
  }
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
