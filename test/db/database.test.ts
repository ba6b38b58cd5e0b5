import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/core/index.ts'
import { databaseUrlDialect, databaseUrlKind, sqlitePath } from '../../src/db/database.ts'
import { createDatabase, type Database } from '../../src/db/index.ts'
import { describeEachDatabase } from '../support/databases.ts'

async function selectOne(database: Database): Promise<number> {
  if (database.dialect === 'sqlite') {
    return database.db.get<{ one: number }>(sql`select 1 as one`)!.one
  }
  const result = await database.db.execute<{ one: number }>(sql`select 1 as one`)
  return Number(result.rows[0]?.one)
}

describeEachDatabase('createDatabase', (backend) => {
  it('opens a database that answers ping and queries, then closes', async () => {
    const { database, cleanup } = await backend.create()
    try {
      expect(database.dialect).toBe(backend.dialect)
      await database.ping()
      expect(await selectOne(database)).toBe(1)
      await database.close()
      await expect(database.ping()).rejects.toThrow()
      await database.close()
    } finally {
      await cleanup()
    }
  })
})

describe('createDatabase URL forms', () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kiln-db-'))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it.each([
    ['sqlite::memory:', 'sqlite', 'better-sqlite3'],
    ['pglite:', 'postgres', 'pglite'],
    ['pglite::memory:', 'postgres', 'pglite'],
  ])('%s → %s on %s', async (url, dialect, driver) => {
    const database = await createDatabase(url)
    expect([database.dialect, database.driver]).toEqual([dialect, driver])
    await database.ping()
    await database.close()
  })

  it('keeps SQLite data in the file a sqlite: or file: URL names', async () => {
    for (const url of [
      `sqlite:${join(dir, 'a.db')}`,
      `file:${join(dir, 'b.db')}`,
      `sqlite://${join(dir, 'c.db')}`,
    ]) {
      const first = await createDatabase(url)
      if (first.dialect !== 'sqlite') throw new Error('expected sqlite')
      first.db.run(sql`create table t (v integer)`)
      first.db.run(sql`insert into t values (7)`)
      await first.close()
      const second = await createDatabase(url)
      if (second.dialect !== 'sqlite') throw new Error('expected sqlite')
      expect(second.db.get<{ v: number }>(sql`select v from t`)).toEqual({ v: 7 })
      await second.close()
    }
  })

  it('keeps PGlite data in the folder a pglite:<dir> URL names, and in pgliteDir without a URL', async () => {
    const first = await createDatabase(`pglite:${join(dir, 'pg')}`)
    if (first.dialect !== 'postgres') throw new Error('expected postgres')
    await first.db.execute(sql`create table t (v integer)`)
    await first.db.execute(sql`insert into t values (7)`)
    await first.close()
    const second = await createDatabase(undefined, { pgliteDir: join(dir, 'pg') })
    expect(second.driver).toBe('pglite')
    if (second.dialect !== 'postgres') throw new Error('expected postgres')
    const result = await second.db.execute<{ v: number }>(sql`select v from t`)
    expect(result.rows).toEqual([{ v: 7 }])
    await second.close()
  })

  it('names DATABASE_URL when the embedded default cannot open, in one line', async () => {
    // A file where the data folder should be: PGlite cannot create its folder there.
    const blocked = join(dir, 'not-a-folder')
    await writeFile(blocked, '')
    const opening = createDatabase(undefined, { pgliteDir: join(blocked, 'pgdata') })
    await expect(opening).rejects.toThrow(ConfigError)
    await expect(createDatabase(undefined, { pgliteDir: join(blocked, 'pgdata') })).rejects.toThrow(
      /^Could not open the database: DATABASE_URL: not set, so kiln opened embedded Postgres \(PGlite\) in .*not-a-folder\/pgdata, which failed \(.+\)\. Set DATABASE_URL/,
    )
  })

  it.each([
    'mysql://localhost/db',
    'postgres:/nohost',
    'http://example.com',
    'nonsense',
    'postgres://',
  ])('rejects %s with a TypeError naming the accepted forms', async (url) => {
    await expect(createDatabase(url)).rejects.toThrow(TypeError)
    await expect(createDatabase(url)).rejects.toThrow(/postgres:\/\/.*sqlite:.*pglite:/)
  })

  it('classifies URLs', () => {
    expect(databaseUrlKind('postgres://u:p@127.0.0.1:5432/db')).toBe('postgres')
    expect(databaseUrlKind('postgresql://127.0.0.1/db')).toBe('postgres')
    expect(databaseUrlKind('sqlite:storage/app.db')).toBe('sqlite')
    expect(databaseUrlKind('file:app.db')).toBe('sqlite')
    expect(databaseUrlKind('pglite:storage/pgdata')).toBe('pglite')
    expect(databaseUrlKind('redis://127.0.0.1')).toBeUndefined()
    expect(databaseUrlDialect('pglite:')).toBe('postgres')
    expect(databaseUrlDialect('file:x.db')).toBe('sqlite')
    expect(sqlitePath('sqlite::memory:')).toBe(':memory:')
    expect(sqlitePath('sqlite:///tmp/x.db?mode=rwc')).toBe('/tmp/x.db')
    expect(sqlitePath('file:data/app.db')).toBe('data/app.db')
  })
})
