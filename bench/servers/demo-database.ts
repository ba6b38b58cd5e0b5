/**
 * Scratch PostgreSQL databases holding the demo's schema and `rows` posts, for the HTTP
 * benchmarks: created, migrated and seeded with one `INSERT … SELECT generate_series` (post n
 * written by author 1 + n % `authors`, every other one published, created n seconds after
 * 2026-01-01), with an API key made for them, and dropped at the end.
 *
 * The server is KILN_BENCH_DATABASE_URL, else KILN_TEST_DATABASE_URL, else
 * postgres://postgres@127.0.0.1:5432/postgres.
 */
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { createApiKey } from '../../src/api/index.ts'
import { createDatabase, migrate } from '../../src/db/index.ts'

export interface DemoDatabase {
  url: string
  rows: number
  /** A raw API key (`Authorization: Bearer …`) valid on this database. */
  apiKey: string
  drop(): Promise<void>
}

export function adminUrl(): string {
  return (
    process.env.KILN_BENCH_DATABASE_URL ||
    process.env.KILN_TEST_DATABASE_URL ||
    'postgres://postgres@127.0.0.1:5432/postgres'
  )
}

export interface DemoDatabaseOptions {
  /** Users the posts are spread over (default 1). */
  authors?: number
}

export async function createDemoDatabase(
  rows: number,
  { authors = 1 }: DemoDatabaseOptions = {},
): Promise<DemoDatabase> {
  const admin = new pg.Client({ connectionString: adminUrl() })
  await admin.connect()
  const name = `kiln_bench_${randomBytes(4).toString('hex')}`
  const url = new URL(adminUrl())
  url.pathname = `/${name}`
  const drop = async () => {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
    await admin.end()
  }
  try {
    await admin.query(`CREATE DATABASE "${name}"`)
    const apiKey = await seed(url.toString(), rows, authors)
    return { url: url.toString(), rows, apiKey, drop }
  } catch (error) {
    await drop()
    throw error
  }
}

async function seed(url: string, rows: number, authors: number): Promise<string> {
  const database = await createDatabase(url, { poolMax: 2 })
  try {
    await migrate(database, {
      appMigrationsDir: fileURLToPath(new URL('../../examples/demo/migrations', import.meta.url)),
    })
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      await client.query(
        `INSERT INTO users (email, name, password_hash)
         SELECT 'bench' || n || '@example.com', 'Bench ' || n, 'x'
         FROM generate_series(1, ${Number(authors)}) AS n`,
      )
      await client.query(
        `INSERT INTO posts (title, body, published, token_count, author_id, created_at)
         SELECT 'Post ' || n, repeat('lorem ipsum ', 20), n % 2 = 0, n % 1000,
                1 + n % ${Number(authors)}, timestamptz '2026-01-01' + n * interval '1 second'
         FROM generate_series(1, ${Number(rows)}) AS n`,
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
