import { sql } from 'drizzle-orm'
import { pgTable, serial, text } from 'drizzle-orm/pg-core'
import { Hono } from 'hono'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRecordCounter, defineListQuery, runListQuery } from '../../src/api/index.ts'
import { createLogger, errorHandler } from '../../src/core/index.ts'
import {
  createDatabase,
  type Database,
  QueryCancelledError,
  QueryWaitTimeoutError,
  slowQueryGateOf,
} from '../../src/db/index.ts'
import { ConnectionWaitTimeoutError, QueryGate } from '../../src/db/query-budget.ts'
import {
  createPostgresTestDatabase,
  describeEachDatabase,
  throughPgBouncer,
} from '../support/databases.ts'

/**
 * The turns of the queries that may be slow (issue #32, the bounded tail): at most
 * `slowQueryConcurrency` budgeted queries run at once on PostgreSQL, the others wait in order,
 * at most `slowQueryWaitMs`, and leave the queue when their client hangs up. The fast pages
 * (pipelined, or on the pool behind a transaction pooler) never wait for a turn.
 *
 * A slow page here is a filtered page of `gate_slow`, held on the server by a lock the test
 * takes on that table (no timing: the page runs until the test lets it go); the fast pages
 * read `gate_fast`, unfiltered, first page, their count cached as on a warm server.
 */

const slowTable = pgTable('gate_slow', { id: serial('id').primaryKey(), body: text('body') })
const fastTable = pgTable('gate_fast', { id: serial('id').primaryKey(), body: text('body') })
const slowQuery = defineListQuery(slowTable, { fields: ['id', 'body'], filter: ['id'] })
const fastQuery = defineListQuery(fastTable, { fields: ['id', 'body'] })

describeEachDatabase(
  'the turns of slow queries',
  (backend) => {
    let drop: () => Promise<void>
    let url: string
    let admin: pg.Client
    let observer: pg.Client
    const opened: Database[] = []

    beforeAll(async () => {
      const created = await createPostgresTestDatabase()
      drop = created.drop
      url = backend.name === 'pgbouncer' ? throughPgBouncer(created.url) : created.url
      admin = new pg.Client({ connectionString: created.url })
      await admin.connect()
      observer = new pg.Client({ connectionString: created.url })
      await observer.connect()
      await admin.query(`
        create table gate_slow (id serial primary key, body text);
        create table gate_fast (id serial primary key, body text);
        insert into gate_slow (body) select 'slow ' || n from generate_series(1, 20) n;
        insert into gate_fast (body) select 'fast ' || n from generate_series(1, 20) n;`)
    }, 60_000)

    afterAll(async () => {
      for (const database of opened) await database.close()
      await admin?.end()
      await observer?.end()
      await drop?.()
    })

    /** A database with one turn for slow queries. */
    async function oneTurn(slowQueryWaitMs: number) {
      const database = await createDatabase(url, {
        poolMax: 4,
        pipelineConnections: 2,
        slowQueryConcurrency: 1,
        slowQueryWaitMs,
        statementTimeoutMs: 60_000,
        logger: { info: () => {} },
      })
      opened.push(database)
      const gate = slowQueryGateOf(database.db)
      if (!gate) throw new Error('no gate on a pg database')
      const counts = createRecordCounter({ ttlMs: 600_000 })
      const list = (
        definition: typeof slowQuery,
        query: string,
        signal?: AbortSignal,
      ): Promise<unknown[]> =>
        runListQuery(definition, `http://localhost/x?${query}`, {
          db: database.db,
          counts,
          signal,
        }).then(({ data }) => data)
      // The fast table's count cached, as on a warm server: its first pages send one query.
      await list(fastQuery, 'per_page=2')
      return { database, gate, list }
    }

    /** Holds every read of gate_slow on the server until the returned function is called. */
    async function lockSlowTable(): Promise<() => Promise<void>> {
      await admin.query('begin; lock table gate_slow in access exclusive mode')
      return async () => {
        await admin.query('commit')
      }
    }

    /** Queries of this database waiting on the server for the lock on gate_slow. */
    const blockedOnServer = async () => {
      const { rows } = await observer.query(
        `select pid from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'
            and query like '%gate_slow%' and pid <> pg_backend_pid()`,
      )
      return rows.length
    }

    it('with one turn, a second slow page waits for it while fast pages answer', async () => {
      const { gate, list } = await oneTurn(60_000)
      const unlock = await lockSlowTable()
      const first = settles(list(slowQuery, 'filter[id]=1&count=none'))
      await until(() => gate.running === 1)
      const second = settles(list(slowQuery, 'filter[id]=2&count=none'))
      await until(() => gate.waiting === 1)
      await untilAsync(async () => (await blockedOnServer()) === 1)
      // Ten fast first pages answer while both slow pages are still held.
      const fast = await Promise.all(
        Array.from({ length: 10 }, () => list(fastQuery, 'per_page=2')),
      )
      expect(fast.map((data) => data.length)).toEqual(Array(10).fill(2))
      expect(first.settled || second.settled).toBe(false)
      expect([gate.running, gate.waiting]).toEqual([1, 1])
      // Only the first reached the server; the second waits in kiln, holding no connection.
      expect(await blockedOnServer()).toBe(1)
      await unlock()
      expect(await first.promise).toEqual([{ id: 1, body: 'slow 1' }])
      expect(await second.promise).toEqual([{ id: 2, body: 'slow 2' }])
      expect([gate.running, gate.waiting]).toEqual([0, 0])
    }, 30_000)

    it('a waiting slow page whose client hangs up leaves the queue; the next one gets the turn', async () => {
      const { gate, list } = await oneTurn(60_000)
      const unlock = await lockSlowTable()
      const first = settles(list(slowQuery, 'filter[id]=1&count=none'))
      await until(() => gate.running === 1)
      const hangUp = new AbortController()
      const gone = settles(list(slowQuery, 'filter[id]=2&count=none', hangUp.signal))
      await until(() => gate.waiting === 1)
      const third = settles(list(slowQuery, 'filter[id]=3&count=none'))
      await until(() => gate.waiting === 2)
      await untilAsync(async () => (await blockedOnServer()) === 1)
      hangUp.abort()
      await expect(gone.promise).rejects.toBeInstanceOf(QueryCancelledError)
      expect(gate.waiting).toBe(1)
      expect(first.settled || third.settled).toBe(false)
      expect(await blockedOnServer()).toBe(1)
      await unlock()
      expect(await first.promise).toEqual([{ id: 1, body: 'slow 1' }])
      // Had the hung-up page kept its place (or its turn), the third would wait for ever.
      expect(await third.promise).toEqual([{ id: 3, body: 'slow 3' }])
      expect([gate.running, gate.waiting]).toEqual([0, 0])
    }, 30_000)

    it('the wait is bounded: past slowQueryWaitMs the request answers 503, the query never sent', async () => {
      const { database, gate, list } = await oneTurn(200)
      const lines: string[] = []
      const app = new Hono()
      app.onError(
        errorHandler({
          logger: createLogger({ destination: { write: (line: string) => void lines.push(line) } }),
        }),
      )
      const counts = createRecordCounter()
      app.get('/slow', async (c) =>
        c.json(
          await runListQuery(slowQuery, c.req.url, {
            db: database.db,
            counts,
            signal: c.req.raw.signal,
          }),
        ),
      )
      const unlock = await lockSlowTable()
      const first = settles(list(slowQuery, 'filter[id]=1&count=none'))
      await until(() => gate.running === 1)
      await untilAsync(async () => (await blockedOnServer()) === 1)
      const response = await app.request('/slow?filter[id]=2&count=none')
      expect(response.status).toBe(503)
      expect(await response.json()).toEqual({
        error: expect.stringContaining('waited 200 ms for its turn'),
        code: 'query_timeout',
      })
      const entry = lines.find((line) => line.includes('query_timeout'))
      expect(entry, lines.join('\n')).toContain('gate_slow')
      // The page that held the turn was never disturbed; the late one never reached the server.
      expect(first.settled).toBe(false)
      expect(await blockedOnServer()).toBe(1)
      expect([gate.running, gate.waiting]).toEqual([1, 0])
      await unlock()
      expect(await first.promise).toEqual([{ id: 1, body: 'slow 1' }])
    }, 30_000)

    it('a turn that finds every pooled connection busy answers 503 after the pool wait, not 500', async () => {
      // One pooled connection, held by a transaction of the app: the slow page gets its turn
      // but no connection. The pool's own wait (5 s) runs out: the database is up and full.
      const database = await createDatabase(url, {
        poolMax: 1,
        pipelineConnections: 0,
        slowQueryConcurrency: 1,
        statementTimeoutMs: 60_000,
        logger: { info: () => {} },
      })
      opened.push(database)
      let letGo = () => {}
      const held = new Promise<void>((resolve) => (letGo = resolve))
      let holding = false
      if (database.dialect !== 'postgres') throw new Error('a pg database')
      const transaction = database.db.transaction(async (tx) => {
        await tx.execute(sql`select 1`)
        holding = true
        await held
      })
      await until(() => holding)
      const page = runListQuery(slowQuery, 'http://localhost/x?filter[id]=1&count=none', {
        db: database.db,
        counts: createRecordCounter(),
      })
      await expect(page).rejects.toBeInstanceOf(ConnectionWaitTimeoutError)
      await expect(page).rejects.toMatchObject({
        status: 503,
        code: 'query_timeout',
        message: expect.stringContaining('every pooled database connection was busy'),
      })
      letGo()
      await transaction
      // Once the connection is free again the same page answers.
      const { data } = await runListQuery(slowQuery, 'http://localhost/x?filter[id]=1&count=none', {
        db: database.db,
        counts: createRecordCounter(),
      })
      expect(data).toEqual([{ id: 1, body: 'slow 1' }])
    }, 30_000)
  },
  { only: ['postgres'] },
)

describe('QueryGate', () => {
  const options = { shape: 'posts id|' }

  it('gives turns in order, as many at once as it holds; a release gives its turn once', async () => {
    const gate = new QueryGate(2, 60_000)
    const order: string[] = []
    const a = await gate.enter(options)
    const b = await gate.enter(options)
    const turn = (name: string) =>
      gate.enter(options).then((release) => {
        order.push(name)
        return release
      })
    const c = turn('c')
    const d = turn('d')
    expect([gate.running, gate.waiting]).toEqual([2, 2])
    a()
    a() // given back once only
    const releaseC = await c
    expect(order).toEqual(['c'])
    expect([gate.running, gate.waiting]).toEqual([2, 1])
    b()
    const releaseD = await d
    expect(order).toEqual(['c', 'd'])
    releaseC()
    releaseD()
    expect([gate.running, gate.waiting]).toEqual([0, 0])
  })

  it('a waiter whose signal aborts leaves the queue with QueryCancelledError', async () => {
    const gate = new QueryGate(1, 60_000)
    const held = await gate.enter(options)
    const hangUp = new AbortController()
    const gone = gate.enter({ ...options, signal: hangUp.signal })
    const next = gate.enter(options)
    hangUp.abort()
    await expect(gone).rejects.toBeInstanceOf(QueryCancelledError)
    expect(gate.waiting).toBe(1)
    held()
    ;(await next)()
    expect([gate.running, gate.waiting]).toEqual([0, 0])
    // A signal already aborted takes no turn at all.
    await expect(gate.enter({ ...options, signal: hangUp.signal })).rejects.toBeInstanceOf(
      QueryCancelledError,
    )
    expect(gate.running).toBe(0)
  })

  it('a waiter past waitMs leaves with a 503 naming the wait; 0 waits not at all', async () => {
    const gate = new QueryGate(1, 20)
    const held = await gate.enter(options)
    const late = gate.enter(options)
    await expect(late).rejects.toBeInstanceOf(QueryWaitTimeoutError)
    await expect(late).rejects.toMatchObject({ status: 503, shape: 'posts id|' })
    expect([gate.running, gate.waiting]).toEqual([1, 0])
    held()
    const impatient = new QueryGate(1, 0)
    const release = await impatient.enter(options)
    await expect(impatient.enter(options)).rejects.toThrow('waited 0 ms for its turn')
    release()
    expect((await impatient.enter(options)) instanceof Function).toBe(true)
  })

  it('takes whole numbers only: 1 turn or more, a wait of 0 ms or more', () => {
    expect(() => new QueryGate(0, 100)).toThrow(/slowQueryConcurrency/)
    expect(() => new QueryGate(1.5, 100)).toThrow(/slowQueryConcurrency/)
    expect(() => new QueryGate(1, -1)).toThrow(/slowQueryWaitMs/)
  })
})

describe('slowQueryConcurrency and slowQueryWaitMs on createDatabase', () => {
  // No query is sent: opening a pg pool connects nothing until the first query.
  const unreachable = 'postgres://kiln@127.0.0.1:1/kiln'

  it('default to the pool beside the pipes (poolMax - pipelineConnections) and 5 s', async () => {
    const cases: Array<[Parameters<typeof createDatabase>[1], number]> = [
      [{}, 6],
      [{ poolMax: 20, pipelineConnections: 8 }, 12],
      [{ poolMax: 4, pipelineConnections: 4 }, 1],
      [{ pipelineConnections: 0 }, 10],
      // Behind a transaction pooler nothing is pipelined: the whole pool.
      [{ pooler: 'transaction', logger: { info: () => {} } }, 10],
      [{ slowQueryConcurrency: 3, slowQueryWaitMs: 0 }, 3],
    ]
    for (const [options, concurrency] of cases) {
      const database = await createDatabase(unreachable, options)
      try {
        const gate = slowQueryGateOf(database.db)
        expect(gate?.concurrency, JSON.stringify(options)).toBe(concurrency)
        expect(gate?.waitMs).toBe(options?.slowQueryWaitMs ?? 5_000)
      } finally {
        await database.close()
      }
    }
  })

  it('refuses a bound that is not a whole number', async () => {
    await expect(createDatabase(unreachable, { slowQueryConcurrency: 0 })).rejects.toThrow(
      /slowQueryConcurrency must be a whole number, 1 or more/,
    )
    await expect(createDatabase(unreachable, { slowQueryWaitMs: 2.5 })).rejects.toThrow(
      /slowQueryWaitMs must be a whole number/,
    )
  })
})

/** A promise and whether it has settled yet. */
function settles<T>(promise: Promise<T>): { promise: Promise<T>; settled: boolean } {
  const tracked = { promise, settled: false }
  promise.then(
    () => (tracked.settled = true),
    () => (tracked.settled = true),
  )
  return tracked
}

async function until(check: () => boolean, withinMs = 10_000): Promise<void> {
  const deadline = performance.now() + withinMs
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`not within ${withinMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

async function untilAsync(check: () => Promise<boolean>, withinMs = 10_000): Promise<void> {
  const deadline = performance.now() + withinMs
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`not within ${withinMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}
