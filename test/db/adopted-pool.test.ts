import { sql } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/node-postgres'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresPool } from '../../src/db/database.ts'
import { checkDatabase, createDatabase, migrate } from '../../src/db/index.ts'
import { createPostgresTestDatabase } from '../support/databases.ts'
import { postgresUrl } from '../support/env.ts'

describe.skipIf(!postgresUrl)("createDatabase over the app's own pg pool [postgres]", () => {
  let server: Awaited<ReturnType<typeof createPostgresTestDatabase>>
  let pool: pg.Pool
  beforeAll(async () => {
    server = await createPostgresTestDatabase()
    pool = new pg.Pool({ connectionString: server.url, max: 3 })
  })
  afterAll(async () => {
    await pool.end()
    await server.drop()
  })

  it('queries, migrates and checks through that pool, and leaves it open on close', async () => {
    // The app's Drizzle client, as `drizzle(pool)` made it: kiln takes its $client.
    const appDb = drizzle(pool)
    const database = await createDatabase(appDb.$client)
    expect(postgresPool(database)).toBe(pool)
    await checkDatabase(database)
    const { applied } = await migrate(database)
    expect(applied).toContain('kiln/0001_api_keys.sql')
    // kiln's tables are visible to the app's own client: one database, one pool.
    const tables = await appDb.execute<{ n: number }>(
      sql`select count(*)::int as n from pg_tables where tablename = 'api_keys'`,
    )
    expect(tables.rows[0]?.n).toBe(1)
    expect(pool.totalCount).toBeLessThanOrEqual(3)
    await database.close()
    expect(pool.ended).toBe(false)
    expect((await pool.query('select 1 as one')).rows[0].one).toBe(1)
  })
})
