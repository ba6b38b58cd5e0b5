import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import { sql } from 'drizzle-orm'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openAppDatabase } from '../../src/cli/app-context.ts'
import { CliError } from '../../src/cli/cli-error.ts'
import { runMigrate } from '../../src/cli/commands/migrate.ts'
import type { Database } from '../../src/db/index.ts'
import { describeEachDatabase, type TestDatabase } from '../support/databases.ts'
import { freePort } from '../support/processes.ts'

async function writeApp(
  dir: string,
  config: { dialect: 'postgres' | 'sqlite'; databaseUrl?: string; migrations?: string },
) {
  await writeFile(
    join(dir, 'kiln.config.ts'),
    `export default ${JSON.stringify({ schema: './schema.ts', out: './api', ...config })}\n`,
  )
}

async function tableNames(database: Database): Promise<string[]> {
  if (database.dialect === 'sqlite') {
    return database.db
      .all<{ name: string }>(sql`select name from sqlite_master where type = 'table'`)
      .map((row) => row.name)
  }
  const result = await database.db.execute<{ tablename: string }>(
    sql`select tablename from pg_tables where schemaname = 'public'`,
  )
  return result.rows.map((row) => row.tablename)
}

/** A pid that belonged to a process which has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', ''])
  return child.pid as number
}

async function message(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(CliError)
  return (error as Error).message
}

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiln-app-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

describeEachDatabase('openAppDatabase and kilnjs migrate', (backend) => {
  // Only a server needs a test database; SQLite and PGlite apps get files in the app folder.
  let test: TestDatabase | undefined
  beforeEach(async () => {
    if (backend.name === 'postgres' || backend.name === 'pgbouncer') test = await backend.create()
  })
  afterEach(async () => {
    await test?.cleanup()
    test = undefined
  })

  /** A URL of this backend another handle can open, relative paths left relative. */
  const urlFor = (name: string) =>
    test?.url ?? (backend.name === 'sqlite' ? `sqlite:${name}.db` : `pglite:${name}-pg`)
  // Each embedded PGlite start takes seconds on a busy machine; these tests open several.
  const timeout = 120_000

  it(
    'prefers DATABASE_URL to the config, resolving relative paths against the cwd',
    async () => {
      await writeApp(dir, { dialect: backend.dialect, databaseUrl: urlFor('from-config') })
      const cwd = join(dir)
      const app = await openAppDatabase({ cwd, env: { DATABASE_URL: urlFor('from-env') } })
      try {
        expect(app.source).toBe('DATABASE_URL')
        expect(app.root).toBe(dir)
        expect(app.kilnConfig.dialect).toBe(backend.dialect)
        expect(app.database.dialect).toBe(backend.dialect)
        await app.database.ping()
      } finally {
        await app.close()
      }
      if (!test?.url) {
        expect(
          existsSync(join(dir, backend.name === 'sqlite' ? 'from-env.db' : 'from-env-pg')),
        ).toBe(true)
        expect(
          existsSync(join(dir, backend.name === 'sqlite' ? 'from-config.db' : 'from-config-pg')),
        ).toBe(false)
      }
    },
    timeout,
  )

  it(
    "uses the config's databaseUrl without DATABASE_URL, and migrates kiln's tables and the app's",
    async () => {
      await mkdir(join(dir, 'migrations'))
      await writeFile(
        join(dir, 'migrations', '0001_things.sql'),
        'CREATE TABLE things (id integer PRIMARY KEY);',
      )
      await writeApp(dir, {
        dialect: backend.dialect,
        databaseUrl: urlFor('data'),
        migrations: './migrations',
      })
      const lines: string[] = []
      const applied = await runMigrate({
        cwd: dir,
        env: {},
        print: (line) => lines.push(stripVTControlCharacters(line)),
      })
      expect(applied).toEqual(
        expect.arrayContaining(['kiln/0001_api_keys.sql', 'app/0001_things.sql']),
      )
      expect(lines.at(-1)).toContain('app/0001_things.sql')
      expect(lines).toContainEqual(expect.stringContaining('kiln/0001_api_keys.sql'))
      const again: string[] = []
      expect(
        await runMigrate({
          cwd: dir,
          env: {},
          print: (line) => again.push(stripVTControlCharacters(line)),
        }),
      ).toEqual([])
      expect(again.at(-1)).toBe('Nothing to migrate')
      const app = await openAppDatabase({ cwd: dir, env: {} })
      try {
        expect(app.source).toBe('kiln.config.ts')
        expect(await tableNames(app.database)).toEqual(
          expect.arrayContaining(['api_keys', 'oauth_clients', 'kiln_migrations', 'things']),
        )
      } finally {
        await app.close()
      }
    },
    timeout,
  )
})

describe('openAppDatabase without a URL', () => {
  it('opens storage/app.db for a SQLite app', async () => {
    await writeApp(dir, { dialect: 'sqlite' })
    const app = await openAppDatabase({ cwd: dir, env: {} })
    await app.close()
    expect(app.source).toBe('embedded')
    expect(app.database.driver).toBe('better-sqlite3')
    expect(existsSync(join(dir, 'storage', 'app.db'))).toBe(true)
  })

  it('ignores a stale kiln-db.json and opens embedded PGlite in storage/pgdata', async () => {
    await writeApp(dir, { dialect: 'postgres' })
    await mkdir(join(dir, 'storage'))
    const url = `postgres://postgres@127.0.0.1:${await freePort()}/postgres`
    await writeFile(join(dir, 'storage', 'kiln-db.json'), JSON.stringify({ url, pid: deadPid() }))
    const app = await openAppDatabase({ cwd: dir, env: { DATABASE_URL: '' } })
    await app.close()
    expect(app.source).toBe('embedded')
    expect(app.database.driver).toBe('pglite')
    expect(existsSync(join(dir, 'storage', 'pgdata', 'PG_VERSION'))).toBe(true)
  }, 60_000)

  it("connects to the running app's shared PGlite socket", async () => {
    await writeApp(dir, { dialect: 'postgres' })
    const pglite = new PGlite()
    await pglite.exec(
      "create table shared_marker (v text); insert into shared_marker values ('demo')",
    )
    const server = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port: 0 })
    await server.start()
    try {
      const port = Number(server.getServerConn().split(':').at(-1))
      await mkdir(join(dir, 'storage'))
      await writeFile(
        join(dir, 'storage', 'kiln-db.json'),
        JSON.stringify({ url: `postgres://postgres@127.0.0.1:${port}/postgres`, pid: process.pid }),
      )
      const app = await openAppDatabase({ cwd: dir, env: {} })
      try {
        expect(app.source).toBe('shared-pglite')
        expect(app.database.driver).toBe('pg')
        if (app.database.dialect !== 'postgres') throw new Error('expected postgres')
        const result = await app.database.db.execute(sql`select v from shared_marker`)
        expect(result.rows).toEqual([{ v: 'demo' }])
      } finally {
        await app.close()
      }
      const lines: string[] = []
      const applied = await runMigrate({
        cwd: dir,
        env: {},
        print: (line) => lines.push(stripVTControlCharacters(line)),
      })
      expect(lines[0]).toBe(`Migrating the running app's embedded database (pid ${process.pid})`)
      expect(applied).toContain('kiln/0001_api_keys.sql')
      const tables = await pglite.query<{ tablename: string }>(
        "select tablename from pg_tables where schemaname = 'public'",
      )
      expect(tables.rows.map((row) => row.tablename)).toEqual(
        expect.arrayContaining(['api_keys', 'kiln_migrations', 'shared_marker']),
      )
      expect(existsSync(join(dir, 'storage', 'pgdata'))).toBe(false)
    } finally {
      await server.stop()
      await pglite.close()
    }
  })

  it('says to stop npm start or set DATABASE_URL when the live app does not answer', async () => {
    await writeApp(dir, { dialect: 'postgres' })
    await mkdir(join(dir, 'storage'))
    const url = `postgres://postgres@127.0.0.1:${await freePort()}/postgres`
    await writeFile(join(dir, 'storage', 'kiln-db.json'), JSON.stringify({ url, pid: process.pid }))
    const text = await message(openAppDatabase({ cwd: dir, env: {} }))
    expect(text).toMatch(
      new RegExp(
        `^The app running as pid ${process.pid} holds the embedded database, but its socket .* does not answer: stop \`npm start\` and retry, or set DATABASE_URL$`,
      ),
    )
    expect(existsSync(join(dir, 'storage', 'pgdata'))).toBe(false)
  })
})

describe('openAppDatabase errors', () => {
  it('rejects a bad DATABASE_URL, naming the variable and the accepted forms', async () => {
    await writeApp(dir, { dialect: 'postgres' })
    for (const bad of ['mysql://localhost/db', 'not a url', 'postgres://', 'https://db.example']) {
      const text = await message(openAppDatabase({ cwd: dir, env: { DATABASE_URL: bad } }))
      expect(text).toMatch(
        /^DATABASE_URL is not a database URL: expected postgres:\/\/.*sqlite:.*pglite:/,
      )
      expect(text).not.toMatch(/mysql|not a url|example/)
    }
  })

  it('rejects a URL of the other dialect and a bad databaseUrl in the config', async () => {
    await writeApp(dir, { dialect: 'postgres' })
    expect(
      await message(openAppDatabase({ cwd: dir, env: { DATABASE_URL: 'sqlite::memory:' } })),
    ).toBe("DATABASE_URL names a SQLite database, but kiln.config.ts says dialect 'postgres'")
    await writeApp(dir, { dialect: 'sqlite', databaseUrl: 'redis://127.0.0.1' })
    expect(await message(openAppDatabase({ cwd: dir, env: {} }))).toMatch(
      /^kiln\.config\.ts databaseUrl is not a database URL: expected/,
    )
  })

  it('reports an unreachable server without its password', async () => {
    await writeApp(dir, { dialect: 'postgres' })
    const url = `postgres://kiln:hunter22@127.0.0.1:${await freePort()}/app`
    const text = await message(openAppDatabase({ cwd: dir, env: { DATABASE_URL: url } }))
    expect(text).toMatch(
      /^Could not reach DATABASE_URL \(postgres:\/\/127\.0\.0\.1:\d+\/app\): .*ECONNREFUSED/,
    )
    expect(text).not.toContain('hunter22')
  })
})
