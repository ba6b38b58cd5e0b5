import { sql } from 'drizzle-orm'
import { sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { silentLogger } from '../../../src/core/index.ts'
import { createDatabase, createModelRegistry, type SqliteDatabase } from '../../../src/db/index.ts'
import { createCrud } from '../../../src/mcp/index.ts'

// WITHOUT ROWID is a SQLite table option: PostgreSQL has no row ids to read back by.
const settings = sqliteTable('settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  scope: text('scope').notNull().default('global'),
})
const tags = sqliteTable('tags', {
  name: text('name').primaryKey(),
  colour: text('colour'),
})

describe('crud_create on SQLite', () => {
  let database: SqliteDatabase

  beforeAll(async () => {
    database = (await createDatabase('sqlite::memory:')) as SqliteDatabase
    database.db.run(
      sql`CREATE TABLE settings (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL, scope TEXT NOT NULL DEFAULT 'global') WITHOUT ROWID`,
    )
    database.db.run(sql`CREATE TABLE tags (name TEXT PRIMARY KEY NOT NULL, colour TEXT)`)
  })
  afterAll(async () => {
    await database.close()
  })

  const crud = () =>
    createCrud({
      database,
      models: createModelRegistry({ settings, tags }, 'sqlite'),
      // Writes are opt-in under the data tools' access policy.
      access: { unlisted: 'all' },
      logger: silentLogger(),
    })

  it('on a WITHOUT ROWID table returns the created row (defaults filled), and creates it once', async () => {
    const created = await crud().create({
      model: 'settings',
      data: { key: 'theme', value: 'dark' },
    })
    expect(created).toEqual({ key: 'theme', value: 'dark', scope: 'global' })
    const second = await crud().create({ model: 'settings', data: { key: 'lang', value: 'en' } })
    expect(second).toEqual({ key: 'lang', value: 'en', scope: 'global' })
    expect(await crud().list({ model: 'settings' })).toMatchObject({ total: 2 })
  })

  it('on an ordinary table still reads the row back by its last inserted row id', async () => {
    expect(await crud().create({ model: 'tags', data: { name: 'news', colour: 'red' } })).toEqual({
      name: 'news',
      colour: 'red',
    })
  })
})
