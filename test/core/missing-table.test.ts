import { Writable } from 'node:stream'
import { pgTable, serial, text } from 'drizzle-orm/pg-core'
import { integer, sqliteTable, text as sqliteText } from 'drizzle-orm/sqlite-core'
import { Hono } from 'hono'
import { afterEach, expect, it } from 'vitest'
import { createLogger, errorHandler } from '../../src/core/index.ts'
import {
  type DatabaseBackend,
  describeEachDatabase,
  type TestDatabase,
} from '../support/databases.ts'

// A table the app's schema declares but no migration has created yet.
const booksPg = pgTable('books', { id: serial('id').primaryKey(), title: text('title') })
const booksSqlite = sqliteTable('books', {
  id: integer('id').primaryKey(),
  title: sqliteText('title'),
})

describeEachDatabase('an app started before its migrations ran', (backend: DatabaseBackend) => {
  let opened: TestDatabase | undefined

  afterEach(async () => {
    await opened?.cleanup()
  })

  it('answers 503 and logs once which table is missing and what to run', async () => {
    opened = await backend.create()
    const { database } = opened
    const lines: string[] = []
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk))
        done()
      },
    })
    const app = new Hono()
    app.onError(errorHandler({ logger: createLogger({ destination }) }))
    app.get('/books', async (c) => {
      const rows =
        database.dialect === 'sqlite'
          ? await database.db.select().from(booksSqlite)
          : await database.db.select().from(booksPg)
      return c.json(rows)
    })
    for (let i = 0; i < 3; i++) {
      const response = await app.request('/books')
      expect(response.status).toBe(503)
      expect(await response.json()).toEqual({
        error: 'Service Unavailable: the database is not migrated',
      })
    }
    expect(lines).toHaveLength(1)
    const logged = JSON.parse(lines[0] ?? '{}')
    expect(logged.table).toBe('books')
    expect(logged.msg).toBe(
      'The database has no table "books": run `npx drizzle-kit generate` (if its migration is not written yet), then `npx kilnjs migrate`',
    )
  })
})
