import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { eq, sql } from 'drizzle-orm'
import { afterEach, beforeEach, expect, it } from 'vitest'
import {
  apiKeysPg,
  apiKeysSqlite,
  createDatabase,
  type Database,
  libraryMigrationsDir,
  MigrationError,
  migrate,
  oauthClientsPg,
  oauthClientsSqlite,
} from '../../src/db/index.ts'
import { describeEachDatabase, type TestDatabase } from '../support/databases.ts'

const root = resolve(import.meta.dirname, '../..')
const demoMigrations = join(root, 'examples/demo/migrations')
const fixtureMigrations = join(root, 'test/fixtures/sqlite-app/migrations')

async function query<T>(database: Database, text: string): Promise<T[]> {
  if (database.dialect === 'sqlite') return database.db.all<T>(sql.raw(text))
  const result = await database.db.execute(sql.raw(text))
  return result.rows as T[]
}

async function execute(database: Database, text: string): Promise<void> {
  if (database.dialect === 'sqlite') database.db.run(sql.raw(text))
  else await database.db.execute(sql.raw(text))
}

async function recorded(database: Database): Promise<{ name: string; checksum: string }[]> {
  return query(database, 'SELECT name, checksum FROM kiln_migrations ORDER BY name')
}

async function tableExists(database: Database, table: string): Promise<boolean> {
  const rows =
    database.dialect === 'sqlite'
      ? await query(
          database,
          `SELECT name FROM sqlite_master WHERE type = 'table' AND name = '${table}'`,
        )
      : await query(database, `SELECT tablename FROM pg_tables WHERE tablename = '${table}'`)
  return rows.length > 0
}

function capture() {
  const lines: { level: 'info' | 'warn'; message: string }[] = []
  return {
    lines,
    logger: {
      info: (message: string) => lines.push({ level: 'info', message }),
      warn: (message: string) => lines.push({ level: 'warn', message }),
    },
  }
}

describeEachDatabase('migrate', (backend) => {
  let test: TestDatabase
  let database: Database
  let dir: string
  const filesIn = async (folder: string, namespace: string) =>
    (await readdir(folder))
      .filter((file) => file.endsWith('.sql'))
      .sort()
      .map((file) => `${namespace}/${file}`)
  const kilnFiles = () => filesIn(libraryMigrationsDir(backend.dialect), 'kiln')
  const appFiles = () =>
    filesIn(backend.dialect === 'sqlite' ? fixtureMigrations : demoMigrations, 'app')

  beforeEach(async () => {
    test = await backend.create()
    database = test.database
    dir = await mkdtemp(join(tmpdir(), 'kiln-migrations-'))
  })
  afterEach(async () => {
    await test.cleanup()
    await rm(dir, { recursive: true, force: true })
  })

  it("applies kiln's migrations in name order, records them and is idempotent", async () => {
    const { lines, logger } = capture()
    const first = await migrate(database, { logger })
    const expected = await kilnFiles()
    expect(expected).toContain('kiln/0001_api_keys.sql')
    expect(first.applied).toEqual(expected)
    expect(lines.map((line) => line.message)).toEqual(expected.map((name) => `Applied ${name}`))
    const rows = await recorded(database)
    expect(rows.map((row) => row.name)).toEqual(expected)
    expect(rows.every((row) => /^[0-9a-f]{64}$/.test(row.checksum))).toBe(true)
    expect(await migrate(database)).toEqual({ applied: [], adopted: [] })
    expect((await recorded(database)).length).toBe(expected.length)
  })

  it('creates the library tables, usable through their Drizzle tables', async () => {
    await migrate(database)
    const expiresAt = new Date('2030-01-02T03:04:05.000Z')
    if (database.dialect === 'sqlite') {
      const [key] = database.db
        .insert(apiKeysSqlite)
        .values({
          name: 'ci',
          prefix: 'kl_test_abc',
          hashedKey: 'f'.repeat(64),
          scopes: '["read"]',
          expiresAt,
        })
        .returning()
        .all()
      expect(key).toMatchObject({ id: 1, name: 'ci', revokedAt: null, expiresAt })
      expect(key?.createdAt).toBeInstanceOf(Date)
      database.db
        .insert(oauthClientsSqlite)
        .values({
          clientId: 'c1',
          redirectUris: '[]',
          grantTypes: '[]',
          responseTypes: '[]',
          metadata: '{}',
        })
        .run()
      const [client] = database.db
        .select()
        .from(oauthClientsSqlite)
        .where(eq(oauthClientsSqlite.clientId, 'c1'))
        .all()
      expect(client).toMatchObject({ clientId: 'c1', tokenEndpointAuthMethod: 'none' })
    } else {
      const [key] = await database.db
        .insert(apiKeysPg)
        .values({
          name: 'ci',
          prefix: 'kl_test_abc',
          hashedKey: 'f'.repeat(64),
          scopes: '["read"]',
          expiresAt,
        })
        .returning()
      expect(key).toMatchObject({ id: 1, name: 'ci', revokedAt: null, expiresAt })
      expect(key?.createdAt).toBeInstanceOf(Date)
      await database.db.insert(oauthClientsPg).values({
        clientId: 'c1',
        redirectUris: '[]',
        grantTypes: '[]',
        responseTypes: '[]',
        metadata: '{}',
      })
      const [client] = await database.db
        .select()
        .from(oauthClientsPg)
        .where(eq(oauthClientsPg.clientId, 'c1'))
      expect(client).toMatchObject({ clientId: 'c1', tokenEndpointAuthMethod: 'none' })
    }
  })

  it("applies the app's migrations after kiln's, once", async () => {
    const appDir = backend.dialect === 'sqlite' ? fixtureMigrations : demoMigrations
    const { applied } = await migrate(database, { appMigrationsDir: appDir })
    expect(applied).toEqual([...(await kilnFiles()), ...(await appFiles())])
    expect(applied).toContain('app/0001_init.sql')
    for (const table of ['users', 'posts']) expect(await tableExists(database, table)).toBe(true)
    await execute(
      database,
      "INSERT INTO users (email, name, password_hash) VALUES ('a@example.com', 'A', 'x')",
    )
    expect(await migrate(database, { appMigrationsDir: appDir })).toEqual({
      applied: [],
      adopted: [],
    })
    expect(await query(database, 'SELECT email FROM users')).toEqual([{ email: 'a@example.com' }])
  })

  it('splits statements on the breakpoint, sorts files by name and applies only new ones', async () => {
    await writeFile(
      join(dir, '0002_b.sql'),
      'CREATE TABLE b_things (id integer PRIMARY KEY);--> statement-breakpoint\nINSERT INTO b_things (id) VALUES (1);',
    )
    await writeFile(join(dir, '0001_a.sql'), 'CREATE TABLE a_things (id integer PRIMARY KEY);\n')
    await writeFile(join(dir, 'notes.txt'), 'not a migration')
    const first = await migrate(database, { appMigrationsDir: dir })
    expect(first.applied.slice(-2)).toEqual(['app/0001_a.sql', 'app/0002_b.sql'])
    await writeFile(join(dir, '0003_c.sql'), 'INSERT INTO b_things (id) VALUES (2);')
    expect(await migrate(database, { appMigrationsDir: dir })).toEqual({
      applied: ['app/0003_c.sql'],
      adopted: [],
    })
    expect(await query(database, 'SELECT id FROM b_things ORDER BY id')).toEqual([
      { id: 1 },
      { id: 2 },
    ])
  })

  it('warns when an applied file changed and does not run it again', async () => {
    await writeFile(join(dir, '0001_a.sql'), 'CREATE TABLE a_things (id integer PRIMARY KEY);')
    await migrate(database, { appMigrationsDir: dir })
    await writeFile(
      join(dir, '0001_a.sql'),
      'CREATE TABLE a_things (id integer PRIMARY KEY, v text);',
    )
    const { lines, logger } = capture()
    expect(await migrate(database, { appMigrationsDir: dir, logger })).toEqual({
      applied: [],
      adopted: [],
    })
    expect(lines).toEqual([
      {
        level: 'warn',
        message: expect.stringContaining('Migration app/0001_a.sql changed after it was applied'),
      },
    ])
  })

  it('rolls back a failing file entirely and names it', async () => {
    await writeFile(join(dir, '0001_ok.sql'), 'CREATE TABLE ok_things (id integer PRIMARY KEY);')
    await writeFile(
      join(dir, '0002_bad.sql'),
      'CREATE TABLE half_things (id integer PRIMARY KEY);\n--> statement-breakpoint\nINSERT INTO missing_table VALUES (1);',
    )
    const error = await migrate(database, { appMigrationsDir: dir }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(MigrationError)
    expect((error as MigrationError).file).toBe('app/0002_bad.sql')
    expect((error as Error).message).toMatch(/^Migration app\/0002_bad.sql failed: .*missing_table/)
    expect(await tableExists(database, 'ok_things')).toBe(true)
    expect(await tableExists(database, 'half_things')).toBe(false)
    expect((await recorded(database)).map((row) => row.name)).not.toContain('app/0002_bad.sql')
    await writeFile(join(dir, '0002_bad.sql'), 'CREATE TABLE half_things (id integer PRIMARY KEY);')
    expect(await migrate(database, { appMigrationsDir: dir })).toEqual({
      applied: ['app/0002_bad.sql'],
      adopted: [],
    })
  })

  it('fails clearly when the app migrations folder does not exist', async () => {
    await expect(migrate(database, { appMigrationsDir: join(dir, 'nope') })).rejects.toThrow(
      /Migrations folder not found: .*nope/,
    )
  })

  it('applies each migration once when two runs migrate at the same time', async () => {
    // On a server the two runs use separate connections (two instances); otherwise one handle.
    const other = test.url ? await createDatabase(test.url, { poolMax: 2 }) : database
    try {
      const appDir = backend.dialect === 'sqlite' ? fixtureMigrations : demoMigrations
      const results = await Promise.all([
        migrate(database, { appMigrationsDir: appDir }),
        migrate(other, { appMigrationsDir: appDir }),
      ])
      const all = results.flatMap((result) => result.applied).sort()
      expect(all).toEqual([...(await kilnFiles()), ...(await appFiles())].sort())
      expect((await recorded(database)).length).toBe(all.length)
    } finally {
      if (other !== database) await other.close()
    }
  })
})
