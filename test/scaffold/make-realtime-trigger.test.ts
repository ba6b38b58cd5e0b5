import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { runMakeRealtimeTrigger } from '../../src/cli/commands/make-realtime-trigger.ts'
import { CliError } from '../../src/cli/index.ts'
import { createDatabase, migrate } from '../../src/db/index.ts'
import { createPostgresTestDatabase } from '../support/databases.ts'
import { postgresUrl } from '../support/env.ts'

const repo = resolve(import.meta.dirname, '../..')

/** A temporary app with a hand-written schema, under the repository so imports resolve. */
function makeApp(name: string, schema: string, dialect: 'postgres' | 'sqlite' = 'postgres') {
  const root = join(repo, 'tmp', `realtime-trigger-${name}-${process.pid}`)
  rmSync(root, { recursive: true, force: true })
  mkdirSync(join(root, 'src'), { recursive: true })
  mkdirSync(join(root, 'migrations'))
  writeFileSync(join(root, 'migrations/0001_init.sql'), CREATE_TABLES)
  writeFileSync(join(root, 'src/schema.ts'), schema)
  writeFileSync(
    join(root, 'kiln.config.ts'),
    `import { defineConfig } from 'kilnjs'\nexport default defineConfig({ dialect: '${dialect}', schema: './src/schema.ts', out: './src/api', migrations: './migrations' })\n`,
  )
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) }
}

const SCHEMA = `import { pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core'

export const oddItems = pgTable('odd "items"', {
  key: uuid('key').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  deletedAt: timestamp('deleted_at', { withTimezone: true }),
})
`

const CREATE_TABLES = `CREATE TABLE "odd ""items""" (key uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL, deleted_at timestamptz);\n`

/** What the command writes for that schema, statement by statement after the function's. */
const TRIGGERS = `DROP TRIGGER IF EXISTS kiln_notify_change ON "odd ""items""";
--> statement-breakpoint
CREATE TRIGGER kiln_notify_change AFTER INSERT OR UPDATE OR DELETE ON "odd ""items"""
  FOR EACH ROW EXECUTE FUNCTION kiln_notify_change('odd_items', 'key', 'deleted_at');
`

describe('kilnjs make:realtime-trigger', () => {
  const app = makeApp('pg', SCHEMA)
  const sqlite = makeApp('sqlite', SCHEMA.replace('pg-core', 'sqlite-core'), 'sqlite')
  afterAll(() => {
    app.cleanup()
    sqlite.cleanup()
  })
  const lines: string[] = []
  const print = (line: string) => lines.push(line)

  it('writes the next migration: one function, a trigger per table, quoted, the key read from the model', async () => {
    const { path } = await runMakeRealtimeTrigger({ cwd: app.root, all: true, print })
    expect(path).toBe(join(app.root, 'migrations', '0002_realtime_trigger.sql'))
    const text = readFileSync(path, 'utf8')
    expect(text.startsWith('-- kiln realtime: writes made outside kiln')).toBe(true)
    expect(text).toContain('CREATE OR REPLACE FUNCTION kiln_notify_change() RETURNS trigger')
    expect(text.endsWith(`--> statement-breakpoint\n${TRIGGERS}`)).toBe(true)
    // No column of the row but its key and its soft-delete column is read.
    expect(text).not.toMatch(/to_jsonb\((NEW|OLD)\)|row_to_json/)
    expect(lines[0]).toMatch(/0002_realtime_trigger\.sql: odd "items"$/)
    // Run again (a model added): a new migration, the same text for the same models.
    const again = await runMakeRealtimeTrigger({ cwd: app.root, models: ['OddItem'], print })
    expect(again.path).toMatch(/0003_realtime_trigger\.sql$/)
    expect(readFileSync(again.path, 'utf8')).toBe(text)
  })

  it('says the trigger is PostgreSQL only on a SQLite app', async () => {
    const error = await runMakeRealtimeTrigger({ cwd: sqlite.root, all: true, print }).catch(
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(CliError)
    expect((error as Error).message).toMatch(/PostgreSQL only \(this app is SQLite\)/)
  })

  it.skipIf(!postgresUrl)(
    'its migrations apply with kilnjs migrate, the second over the first',
    async () => {
      const server = await createPostgresTestDatabase()
      const database = await createDatabase(server.url)
      const listener = new pg.Client({ connectionString: server.url })
      try {
        const quiet = { info: () => {}, warn: () => {} }
        await migrate(database, { appMigrationsDir: join(app.root, 'migrations'), logger: quiet })
        await listener.connect()
        const heard: string[] = []
        listener.on('notification', (message) => heard.push(message.payload ?? ''))
        await listener.query('LISTEN kiln_changes')
        const { rows } = await listener.query(
          `INSERT INTO "odd ""items""" (name) VALUES ('x') RETURNING key`,
        )
        await listener.query(`UPDATE "odd ""items""" SET deleted_at = now()`)
        await new Promise((done) => setTimeout(done, 100))
        expect(heard.map((payload) => JSON.parse(payload))).toMatchObject([
          { resource: 'odd_items', table: 'odd "items"', kind: 'created', id: rows[0].key },
          { resource: 'odd_items', table: 'odd "items"', kind: 'deleted', id: rows[0].key },
        ])
      } finally {
        await listener.end()
        await database.close()
        await server.drop()
      }
    },
  )
})
