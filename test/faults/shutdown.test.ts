import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { createPostgresTestDatabase } from '../support/databases.ts'
import { postgresUrl } from '../support/env.ts'
import { startDemoProcess, waitFor } from '../support/processes.ts'
import { inboundText, messagingEnv, mintKey, signedWebhook } from './support.ts'

/** SIGTERM while requests and jobs are in flight: they finish, new connections are refused, exit 0. */
describe.skipIf(!postgresUrl)('faults: SIGTERM under load', () => {
  const cleanups: (() => Promise<unknown>)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  }, 60_000)

  it('finishes in-flight requests, refuses new connections, drains the queue and exits 0', async () => {
    const database = await createPostgresTestDatabase()
    const pool = new pg.Pool({ connectionString: database.url, max: 3 })
    // Dropping the database ends idle connections; that is expected, not a failure.
    pool.on('error', () => {})
    cleanups.push(
      () => database.drop(),
      () => pool.end(),
    )
    // No REDIS_URL: the in-process queue, worked by the web process, must drain before exit.
    const demo = await startDemoProcess({ ...messagingEnv, DATABASE_URL: database.url })
    cleanups.push(() => demo.stop())
    const key = await mintKey(pool)

    // Jobs that cannot finish yet: their listener's insert waits on a lock the test holds.
    const blocker = await pool.connect()
    await blocker.query('begin')
    await blocker.query('lock table messages in share row exclusive mode')
    const wamids = Array.from(
      { length: 4 },
      (_, i) => `wamid.term-${i}-${randomBytes(4).toString('hex')}`,
    )
    for (const wamid of wamids) {
      const response = await fetch(
        `${demo.url}/messaging/webhook`,
        signedWebhook(inboundText(wamid, 'drain me')),
      )
      expect(response.status).toBe(200)
    }

    // The jobs' inserts wait on the lock. Once they have waited longer than the database's
    // pipelined connections count as stalled (25 ms), no query is queued behind them: the
    // requests below reach the table through pooled connections and wait on the lock too.
    await waitFor(async () => {
      const { rows } = await pool.query(
        `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock'
         and datname = current_database() and now() - query_start > interval '100 milliseconds'`,
      )
      return (rows[0] as { n: number }).n >= wamids.length
    }, 'the jobs to be waiting on the table')

    // Requests in flight when the signal arrives: creates that wait on the same lock.
    const inFlight = Array.from({ length: 4 }, (_, i) =>
      fetch(`${demo.url}/api/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          wamid: `wamid.api-${i}-${randomBytes(4).toString('hex')}`,
          direction: 'outbound',
        }),
      }).then((response) => response.status),
    )
    await waitFor(async () => {
      const { rows } = await pool.query(
        `select count(*)::int as n from pg_locks l join pg_class c on c.oid = l.relation
         where c.relname = 'messages' and not l.granted`,
      )
      return (rows[0] as { n: number }).n >= 8
    }, 'requests and jobs to be waiting on the table')
    demo.child.kill('SIGTERM')

    await waitFor(
      async () => {
        try {
          await fetch(`${demo.url}/health`)
          return false
        } catch {
          return true
        }
      },
      'new connections to be refused',
      30_000,
    )
    expect(demo.child.exitCode).toBeNull()

    // Only now can the requests and jobs finish; the process must wait for them before it exits.
    await blocker.query('rollback')
    blocker.release()
    expect(await Promise.all(inFlight)).toEqual(Array(4).fill(201))
    expect(await demo.exited).toBe(0)
    const { rows } = await pool.query(
      'select count(*)::int as n from messages where wamid = any($1)',
      [wamids],
    )
    expect(rows[0]).toEqual({ n: wamids.length })
  }, 180_000)
})
