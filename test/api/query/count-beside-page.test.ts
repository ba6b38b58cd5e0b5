import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeEachDatabase } from '../../support/databases.ts'
import { type QueryApp, startQueryApp } from './support.ts'

/**
 * Past page 1 an uncached exact total is counted beside the page read, not after it: on a
 * large table a deep OFFSET and a count(*) each take a while, and in a row their times add up
 * (at 10^6 rows on a loaded machine, past a 3-second benchmark burst). Shown without timing:
 * another session locks the table, and both statements of one list request must be waiting
 * on that lock at once.
 */
describeEachDatabase(
  'an offset page past the first counts beside its read',
  (backend) => {
    let q: QueryApp
    let locker: pg.Client

    beforeAll(async () => {
      q = await startQueryApp(backend, { ttlMs: 60_000 })
      await q.seed(30)
      locker = new pg.Client({ connectionString: q.test.url })
      await locker.connect()
    })
    afterAll(async () => {
      await locker?.end()
      await q?.close()
    })

    /** Our statements on posts that wait for a lock, as PostgreSQL sees them. */
    async function waiting(): Promise<string[]> {
      // Inside the locking transaction the activity view is a snapshot: take a fresh one.
      await locker.query('select pg_stat_clear_snapshot()')
      const { rows } = await locker.query<{ query: string }>(
        `select query from pg_stat_activity
         where datname = current_database() and pid <> pg_backend_pid() and wait_event_type = 'Lock'`,
      )
      return rows.map((row) => row.query)
    }

    it('has the count and the page in flight together while the table is locked', async () => {
      await locker.query('begin')
      await locker.query('lock table posts in access exclusive mode')
      const answer = q.get('/posts?page=2&per_page=5')
      let seen: string[] = []
      // Bounded by the test's timeout: with the count run after the page, it never shows.
      while (seen.length < 2) {
        seen = await waiting()
        if (seen.length < 2) await new Promise((resolve) => setTimeout(resolve, 20))
      }
      await locker.query('commit')
      expect(seen.some((query) => /count\(\*\)/i.test(query))).toBe(true)
      expect(seen.some((query) => /offset/i.test(query))).toBe(true)
      const body = (await (await answer).json()) as { data: unknown[]; meta: { total: number } }
      expect(body.data).toHaveLength(5)
      expect(body.meta.total).toBe(30)
    })

    it('takes a partial last page total from the page, not from the count beside it', async () => {
      const counted = (await (await q.get('/posts?page=2&per_page=5')).json()) as {
        meta: { total: number }
      }
      expect(counted.meta.total).toBe(30)
      // Two rows written outside the API: the cached count (30) is now stale.
      await locker.query(
        'insert into posts (title, body, author_id) select title, body, author_id from posts limit 2',
      )
      const stale = (await (await q.get('/posts?page=2&per_page=5')).json()) as {
        meta: { total: number }
      }
      expect(stale.meta.total).toBe(30)
      const last = (await (await q.get('/posts?page=5&per_page=7')).json()) as {
        data: unknown[]
        meta: { total: number }
      }
      expect(last.data).toHaveLength(4)
      expect(last.meta.total).toBe(32)
    })
  },
  { only: ['postgres'] },
)
