/**
 * `verifyKey` in process (a function micro-benchmark): answered from the verification cache
 * against answered from the database (the prefix query on a warm pool). What API-key auth and
 * the limiter cost over HTTP is measured out of process by the `rest-api` benchmark (the show
 * route taken apart by layer).
 * Needs PostgreSQL: KILN_BENCH_DATABASE_URL, KILN_TEST_DATABASE_URL or DATABASE_URL (a
 * scratch database is created and dropped).
 */
import { randomBytes } from 'node:crypto'
import { sql } from 'drizzle-orm'
import type { NodePgDatabase } from 'drizzle-orm/node-postgres'
import { createApiKey, createDatabaseApiKeyProvider } from 'kilnjs/api'
import { silentLogger } from 'kilnjs/core'
import { createDatabase, migrate } from 'kilnjs/db'
import pg from 'pg'
import { type BenchOptions, type BenchResult, measure } from './lib.ts'

const ROWS = 10_000
const POOL = 10

export default async function run({ quick }: BenchOptions): Promise<BenchResult[]> {
  const adminUrl =
    process.env.KILN_BENCH_DATABASE_URL ||
    process.env.KILN_TEST_DATABASE_URL ||
    process.env.DATABASE_URL ||
    'postgres://postgres@127.0.0.1:5432/postgres'
  if (!/^postgres(ql)?:\/\//.test(adminUrl)) {
    throw new Error(
      'bench api-keys needs a postgres:// URL (KILN_TEST_DATABASE_URL or DATABASE_URL)',
    )
  }
  const name = `kiln_bench_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE "${name}"`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  const database = await createDatabase(url.toString(), { poolMax: POOL })
  if (database.dialect !== 'postgres') throw new TypeError('expected a Postgres database')
  const providers: { close(): Promise<void> }[] = []
  try {
    await migrate(database, { logger: { info: () => {}, warn: () => {} } })
    const db = database.db as NodePgDatabase
    await db.execute(
      sql.raw(
        'CREATE TABLE bench_records (id bigserial PRIMARY KEY, title text NOT NULL, body text NOT NULL)',
      ),
    )
    await db.execute(
      sql.raw(
        `INSERT INTO bench_records (title, body) SELECT 'Record ' || n, repeat('lorem ipsum ', 20) FROM generate_series(1, ${ROWS}) AS n`,
      ),
    )
    const { rawKey } = await createApiKey(database, { name: 'bench', scopes: ['*'] })
    const cached = createDatabaseApiKeyProvider({ database, logger: silentLogger() })
    const uncached = createDatabaseApiKeyProvider({
      database,
      logger: silentLogger(),
      cacheTtlMs: 0,
    })
    providers.push(cached, uncached)
    await waitFor(() => cached.status().changeFeed === 'live')

    const results: BenchResult[] = []
    const verify = quick
      ? { rounds: 2, durationMs: 300, concurrency: POOL }
      : { rounds: 6, durationMs: 1_000, concurrency: POOL }
    const { cpu: _cpu, ...measured } = await compareWithCpu(
      () => cached.verifyKey(rawKey),
      () => uncached.verifyKey(rawKey),
      verify,
    )
    results.push({
      name: 'verifyKey, cached',
      baseline: 'verifyKey, uncached (prefix query, warm pool)',
      ...measured,
      notes: `in process, ${POOL} concurrent callers, pool ${POOL}`,
    })
    return results
  } finally {
    for (const provider of providers) await provider.close()
    await database.close()
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
    await admin.end()
  }
}

/**
 * `compare` from lib.ts (alternating rounds, warm-up first), also summing this process's CPU
 * time per operation on each side: on a shared, busy machine that is steadier than wall time.
 */
async function compareWithCpu(
  subject: () => Promise<unknown>,
  baseline: () => Promise<unknown>,
  options: { rounds: number; durationMs: number; concurrency: number },
): Promise<{ ops: number; baselineOps: number; ratio: number; cpu: string }> {
  interface Side {
    fn: () => Promise<unknown>
    count: number
    ms: number
    cpuUs: number
  }
  const s: Side = { fn: subject, count: 0, ms: 0, cpuUs: 0 }
  const b: Side = { fn: baseline, count: 0, ms: 0, cpuUs: 0 }
  const sides = [s, b]
  for (const side of sides)
    await measure(side.fn, Math.min(300, options.durationMs), options.concurrency)
  for (let round = 0; round < options.rounds; round++) {
    const order = round % 2 === 0 ? [s, b] : [b, s]
    for (const side of order) {
      const before = process.cpuUsage()
      const { count, ms } = await measure(side.fn, options.durationMs, options.concurrency)
      const used = process.cpuUsage(before)
      side.count += count
      side.ms += ms
      side.cpuUs += used.user + used.system
    }
  }
  const ops = (s.count / s.ms) * 1000
  const baselineOps = (b.count / b.ms) * 1000
  const sCpu = s.cpuUs / s.count
  const bCpu = b.cpuUs / b.count
  const cpu = `${Math.round(sCpu)} µs vs ${Math.round(bCpu)} µs (+${(((sCpu - bCpu) / bCpu) * 100).toFixed(1)}%)`
  return { ops, baselineOps, ratio: ops / baselineOps, cpu }
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 25))
  if (!condition()) throw new Error('the API key change feed did not connect')
}
