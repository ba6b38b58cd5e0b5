import { sql } from 'drizzle-orm'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresPool } from '../../src/db/database.ts'
import { createDatabase, type PostgresDatabase } from '../../src/db/index.ts'
import { pipelinedSockets, pipelineOneOffQueries } from '../../src/db/pipelined-queries.ts'
import { postgresUrl } from '../support/env.ts'
import { freePort } from '../support/processes.ts'
import { countSocketWrites } from '../support/sockets.ts'

/** The pipelined connections' clients, read off the server: their backend pids. */
async function backendPids(url: string): Promise<number[]> {
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  try {
    const { rows } = await admin.query<{ pid: number }>(
      `select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
    )
    return rows.map((row) => row.pid)
  } finally {
    await admin.end()
  }
}

/** Pings until every pipelined connection is up. */
async function warmUp(database: PostgresDatabase): Promise<void> {
  await Promise.all([database.ping(), database.ping(), database.ping(), database.ping()])
}

function currentPipes(database: PostgresDatabase): object[] {
  return pipelinedSockets(postgresPool(database)!)
}

describe.skipIf(!postgresUrl)('one-off queries pipelined over a few connections [postgres]', () => {
  let database: PostgresDatabase
  const url = postgresUrl as string

  beforeAll(async () => {
    database = (await createDatabase(url, {
      poolMax: 4,
      pipelineConnections: 2,
    })) as PostgresDatabase
    await warmUp(database)
  })
  afterAll(async () => {
    await database.close()
  })

  it('sends the queries of one loop turn in one write per connection, each answered with its own rows', async () => {
    const sockets = currentPipes(database)
    expect(sockets).toHaveLength(2)
    const counters = sockets.map((socket) => countSocketWrites(socket))
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          database.db.execute<{ n: number }>(sql`select ${i}::int as n, pg_sleep(0)`),
        ),
      )
      expect(answers.map((answer) => answer.rows[0]?.n)).toEqual(
        Array.from({ length: 20 }, (_, i) => i),
      )
      expect(counters.map((counter) => counter.writes)).toEqual([1, 1])
    } finally {
      for (const counter of counters) counter.restore()
    }
  })

  it('fails a bad query alone: the others of its write are answered', async () => {
    const results = await Promise.allSettled([
      database.db.execute(sql`select 1 as one`),
      database.db.execute(sql`select * from kiln_no_such_table`),
      database.db.execute(sql`select 3 as three`),
    ])
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(
      String(
        (results[1] as PromiseRejectedResult).reason?.cause ??
          (results[1] as PromiseRejectedResult).reason,
      ),
    ).toMatch(/kiln_no_such_table/)
  })

  it('adds no query behind a stalled one: when every connection waits, the pool answers', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 2 })
    pool.on('error', () => {})
    // Stalled from the first instant: the routing does not depend on how fast this machine is.
    pipelineOneOffQueries(pool, pg.Client, { connections: 2, stalledAfterMs: 0 })
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    try {
      await pool.query('create table if not exists kiln_pipeline_locked (n int)')
      await admin.query('begin')
      await admin.query('lock table kiln_pipeline_locked in access exclusive mode')
      const blocked = [1, 2].map(() => pool.query('select count(*) from kiln_pipeline_locked'))
      let waiting = 0
      while (waiting < 2) {
        const { rows } = await admin.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`,
        )
        waiting = rows[0]?.n ?? 0
      }
      // Both pipelined connections wait on the lock; this query is not queued behind either.
      const free = await pool.query<{ n: number }>('select 42 as n')
      expect(free.rows[0]?.n).toBe(42)
      await admin.query('rollback')
      expect((await Promise.all(blocked)).map((result) => result.rowCount)).toEqual([1, 1])
    } finally {
      await admin.end()
      await pool.query('drop table if exists kiln_pipeline_locked').catch(() => {})
      await pool.end()
    }
  })

  it('keeps transactions on a pooled connection of their own', async () => {
    await database.db.execute(sql`create temporary table if not exists kiln_never (n int)`)
    const seen = await database.db.transaction(async (tx) => {
      await tx.execute(sql`set local application_name = 'kiln-tx'`)
      // One-off queries made meanwhile are not inside the transaction.
      const outside = await database.db.execute<{ name: string }>(
        sql`select current_setting('application_name') as name`,
      )
      const inside = await tx.execute<{ name: string }>(
        sql`select current_setting('application_name') as name`,
      )
      return [outside.rows[0]?.name, inside.rows[0]?.name]
    })
    expect(seen[1]).toBe('kiln-tx')
    expect(seen[0]).not.toBe('kiln-tx')
  })

  it('opens a connection again when one is lost; the queries waiting on it reject', async () => {
    const before = await backendPids(url)
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    try {
      const slow = database.db.execute(sql`select pg_sleep(5)`)
      const rejected = expect(slow).rejects.toThrow()
      // The connection the slow query waits on is cut by the server (an admin, a failover).
      let cut = 0
      while (cut === 0) {
        const { rows } = await admin.query(
          `select pg_terminate_backend(pid) from pg_stat_activity where query = 'select pg_sleep(5)'`,
        )
        cut = rows.length
      }
      await rejected
    } finally {
      await admin.end()
    }
    const answers = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        database.db.execute<{ n: number }>(sql`select ${i}::int as n`),
      ),
    )
    expect(answers.map((answer) => answer.rows[0]?.n)).toEqual([0, 1, 2, 3])
    const after = await backendPids(url)
    expect(after.some((pid) => !before.includes(pid))).toBe(true)
  })

  it('rejects the queries of a connection that cannot be opened with its error', async () => {
    const port = await freePort()
    const unreachable = (await createDatabase(`postgres://postgres@127.0.0.1:${port}/postgres`, {
      pipelineConnections: 2,
    })) as PostgresDatabase
    try {
      // Drizzle wraps the driver's error as its cause; a second query tries a new connection.
      for (let attempt = 0; attempt < 2; attempt++) {
        const error = await unreachable.ping().catch((caught: Error) => caught)
        expect(String((error as Error).cause)).toMatch(/ECONNREFUSED/)
      }
    } finally {
      await unreachable.close()
    }
  })

  it("takes createDatabase's stall threshold: past it the pool answers, below it a query waits behind the slow one", async () => {
    /** Sends a query behind one kept waiting on a lock; how many pooled connections it opened. */
    const pooledBehindSlowQuery = async (stalledAfterMs: number): Promise<number> => {
      const own = (await createDatabase(url, {
        pipelineConnections: 1,
        pipelineStalledAfterMs: stalledAfterMs,
      })) as PostgresDatabase
      const admin = new pg.Client({ connectionString: url })
      await admin.connect()
      try {
        await own.db.execute(sql`create table if not exists kiln_pipeline_stall (n int)`)
        await admin.query('begin')
        await admin.query('lock table kiln_pipeline_stall in access exclusive mode')
        // Drizzle's queries are lazy: `then` sends them.
        const slow = own.db.execute(sql`select count(*) from kiln_pipeline_stall`).then(() => {})
        // Until the server has kept it waiting for 100 ms, past the default of 25 ms, however
        // fast this machine is (clock_timestamp: now() is the admin transaction's start).
        let waiting = 0
        while (waiting < 1) {
          const { rows } = await admin.query<{ n: number }>(
            `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock'
               and datname = current_database() and clock_timestamp() - query_start > interval '100 ms'`,
          )
          waiting = rows[0]?.n ?? 0
        }
        const next = own.db.execute(sql`select 1`).then(() => {})
        await new Promise((resolve) => setImmediate(resolve))
        const pooled = postgresPool(own)!.totalCount
        // Routed to the pool, it is answered while the lock is held.
        if (pooled > 0) await next
        await admin.query('rollback')
        await Promise.all([slow, next])
        return pooled
      } finally {
        await admin.end()
        await own.db.execute(sql`drop table if exists kiln_pipeline_stall`).catch(() => {})
        await own.close()
      }
    }
    expect(await pooledBehindSlowQuery(0)).toBe(1)
    expect(await pooledBehindSlowQuery(600_000)).toBe(0)
  })

  it('refuses a pipeline setting that is not a count or a duration', async () => {
    await expect(createDatabase(url, { pipelineConnections: 1.5 })).rejects.toThrow(
      /pipelineConnections must be a whole number/,
    )
    await expect(createDatabase(url, { pipelineStalledAfterMs: -1 })).rejects.toThrow(
      /pipelineStalledAfterMs must be 0 or more/,
    )
  })

  it('ends its connections with the database; queries after close reject', async () => {
    const own = (await createDatabase(url, { pipelineConnections: 2 })) as PostgresDatabase
    await warmUp(own)
    const sockets = currentPipes(own)
    await own.close()
    expect(sockets.every((socket) => (socket as { destroyed?: boolean }).destroyed)).toBe(true)
    await expect(own.ping()).rejects.toThrow()
  })
})
