import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, type PostgresDatabase, postgresPool } from '../../src/db/database.ts'
import { waitFor } from '../support/processes.ts'
import { type OwnPostgres, serversAvailable, startOwnPostgres } from './servers.ts'

/**
 * A statement on an open connection to a frozen server (SIGSTOP: the connection stays open,
 * nothing answers) gives up after `queryTimeoutMs` and closes that connection: the pool opens
 * another, a transaction's ROLLBACK does not wait a second budget, and nothing stays checked out.
 */
describe.skipIf(!serversAvailable)('the query budget on an open connection', () => {
  let postgres: OwnPostgres
  let database: PostgresDatabase

  beforeAll(async () => {
    postgres = await startOwnPostgres()
    const opened = await createDatabase(postgres.url, {
      queryTimeoutMs: 1_000,
      statementTimeoutMs: 500,
      connectTimeoutMs: 1_000,
      pipelineConnections: 0,
      logger: { info() {} },
    })
    if (opened.dialect !== 'postgres') throw new Error('expected PostgreSQL')
    database = opened
  }, 60_000)

  afterAll(async () => {
    await postgres?.thaw()
    await database?.close()
    await postgres?.stop()
  })

  /** How long `work` took to fail, and with what. */
  async function failure(work: () => Promise<unknown>) {
    const started = performance.now()
    const error = await work().then(
      () => undefined,
      (caught: Error) => caught,
    )
    return { error, ms: performance.now() - started }
  }

  it('fails within the budget, closes the connection, and works again after the thaw', async () => {
    const pool = postgresPool(database)
    // Two open connections, idle in the pool, as the server freezes under them.
    await Promise.all([
      database.db.transaction(async (tx) => tx.execute(sql`select pg_sleep(0.05)`)),
      database.db.transaction(async (tx) => tx.execute(sql`select pg_sleep(0.05)`)),
    ])
    expect(pool?.totalCount).toBe(2)
    await postgres.freeze()
    try {
      const [query, transaction] = await Promise.all([
        failure(() => database.db.execute(sql`select 1`)),
        failure(() => database.db.transaction(async (tx) => tx.execute(sql`select 1`))),
      ])
      for (const { error, ms } of [query, transaction]) {
        expect(String((error as { cause?: unknown })?.cause ?? error)).toMatch(/Query read timeout/)
        // One budget, not one for the statement and another for the ROLLBACK after it.
        expect(ms).toBeLessThan(1_800)
      }
      expect(pool?.totalCount, 'the abandoned connections are closed').toBe(0)
      // More failed transactions than the pool has places: none keeps one.
      const attempts = Array.from({ length: 12 }, () =>
        failure(() => database.db.transaction(async (tx) => tx.execute(sql`select 1`))),
      )
      for (const { ms } of await Promise.all(attempts)) expect(ms).toBeLessThan(2_800)
      // Connections still being opened for waiters that gave up end within their own budget.
      await waitFor(() => pool?.totalCount === 0, 'no place of the pool leaked', 2_500)
    } finally {
      await postgres.thaw()
    }
    // Back without a restart: the whole pool serves again.
    await Promise.all(
      Array.from({ length: 10 }, () =>
        database.db.transaction(async (tx) => tx.execute(sql`select pg_sleep(0.05)`)),
      ),
    )
  }, 30_000)
})
