import { sql } from 'drizzle-orm'
import type { NodePgDatabase } from 'drizzle-orm/node-postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Database } from '../../src/db/index.ts'
import { budgetedDb } from '../../src/db/query-budget.ts'
import { describeEachDatabase, type TestDatabase } from '../support/databases.ts'
import { failOnDeprecation } from '../support/deprecations.ts'

/**
 * A budgeted query sends its statements on its pooled connection one at a time (issue #39):
 * pg deprecates a query written while the client still runs another, and pg 9 rejects it. The
 * suites run with deprecations as errors (`vitest.config.ts`), so an overlap fails here.
 */

describe('the test processes', () => {
  it("treat a deprecation as an error, so a new one fails the run (kiln's own excepted)", () => {
    expect(process.listeners('warning')).toContain(failOnDeprecation)
    const deprecation = (code: string) =>
      Object.assign(new Error('old'), { name: 'DeprecationWarning', code })
    expect(() => failOnDeprecation(deprecation('DEP0005'))).toThrow('old')
    expect(() => failOnDeprecation(deprecation('KILN_CDN_LEGACY_ENV'))).not.toThrow()
  })
})

describeEachDatabase(
  'a budgeted query, one statement at a time',
  (backend) => {
    let created: TestDatabase
    let database: Database
    const warnings: Error[] = []
    const onWarning = (warning: Error) => warnings.push(warning)
    /** The PostgreSQL backends' db, as the budget sees it. */
    const pgDb = () => database.db as unknown as NodePgDatabase

    beforeAll(async () => {
      created = await backend.create()
      database = created.database
      process.on('warning', onWarning)
    }, 60_000)

    afterAll(async () => {
      process.off('warning', onWarning)
      await created?.cleanup()
    })

    it('answers without a warning: no query overlaps another on its client', async () => {
      const db = budgetedDb(pgDb(), { shape: 'test' })
      const rows = await db.execute(sql`select 41 + 1 as answer`)
      expect(rows.rows[0]).toEqual({ answer: 42 })
      expect(warnings.map((warning) => warning.message)).toEqual([])
    })

    it('a client that hangs up cancels its query; the connection serves the next', async () => {
      const controller = new AbortController()
      const running = budgetedDb(pgDb(), {
        shape: 'hung up',
        signal: controller.signal,
      })
        .execute(sql`select pg_sleep(30)`)
        .catch((error: unknown) => error)
      setTimeout(() => controller.abort(), 200)
      const started = Date.now()
      expect(await running).toBeInstanceOf(Error)
      expect(Date.now() - started).toBeLessThan(5_000)
      const db = budgetedDb(pgDb(), { shape: 'next' })
      const after = await db.execute(sql`select 1 as one`)
      expect(after.rows[0]).toEqual({ one: 1 })
      expect(warnings.map((warning) => warning.message)).toEqual([])
    })
  },
  { only: ['postgres'] },
)
