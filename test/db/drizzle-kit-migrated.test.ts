import { execFile } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { promisify, stripVTControlCharacters } from 'node:util'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runMigrate } from '../../src/cli/commands/migrate.ts'
import { createPostgresTestDatabase } from '../support/databases.ts'
import { postgresUrl } from '../support/env.ts'

const run = promisify(execFile)
const repo = resolve(import.meta.dirname, '../..')
const drizzleKit = join(repo, 'node_modules/.bin/drizzle-kit')

const SCHEMA = `import { pgEnum, pgTable, text, uuid } from 'drizzle-orm/pg-core'

export const ticketStatus = pgEnum('ticket_status', ['open', 'closed'])

export const tickets = pgTable('tickets', {
  id: uuid('id').primaryKey().defaultRandom(),
  title: text('title').notNull(),
  status: ticketStatus('status').notNull().default('open'),
  // column
})
`

describe.skipIf(!postgresUrl)('kilnjs migrate after drizzle-kit migrate [postgres]', () => {
  const root = join(repo, 'tmp', `drizzle-kit-migrated-${process.pid}`)
  let database: Awaited<ReturnType<typeof createPostgresTestDatabase>>
  const env = () => ({ DATABASE_URL: database.url })

  async function migrateLines(): Promise<string[]> {
    const lines: string[] = []
    await runMigrate({ cwd: root, env: env(), print: (line) => lines.push(line) })
    return lines.map((line) => stripVTControlCharacters(line))
  }

  async function query<T extends pg.QueryResultRow>(text: string): Promise<T[]> {
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      return (await client.query<T>(text)).rows
    } finally {
      await client.end()
    }
  }

  beforeAll(async () => {
    database = await createPostgresTestDatabase()
    rmSync(root, { recursive: true, force: true })
    mkdirSync(join(root, 'src/db'), { recursive: true })
    writeFileSync(join(root, 'package.json'), '{ "type": "module" }\n')
    writeFileSync(join(root, 'src/db/schema.ts'), SCHEMA)
    writeFileSync(
      join(root, 'drizzle.config.ts'),
      "import { defineConfig } from 'drizzle-kit'\nexport default defineConfig({ dialect: 'postgresql', schema: './src/db/schema.ts', out: './drizzle', dbCredentials: { url: process.env.DATABASE_URL ?? '' } })\n",
    )
    // What init writes in such an app: the migrations folder is drizzle-kit's.
    writeFileSync(
      join(root, 'kiln.config.ts'),
      "export default { dialect: 'postgres', schema: './src/db/schema.ts', out: './src/api', migrations: './drizzle' }\n",
    )
    // The app's own history: drizzle-kit wrote its migration and applied it.
    await run(drizzleKit, ['generate'], { cwd: root })
    await run(drizzleKit, ['migrate'], { cwd: root, env: { ...process.env, ...env() } })
  }, 120_000)
  afterAll(async () => {
    rmSync(root, { recursive: true, force: true })
    await database?.drop()
  })

  it('records what drizzle-kit applied instead of running it again, then applies what is new', async () => {
    const first = await migrateLines()
    expect(first.join('\n')).not.toMatch(/already exists/)
    const adopted = first.filter((line) => line.startsWith('= '))
    expect(adopted).toHaveLength(1)
    expect(adopted[0]).toMatch(
      /^= app\/0000_\w+\.sql \(applied by drizzle-kit migrate: recorded, not run again\)$/,
    )
    expect(first).toContain('✓ kiln/0001_api_keys.sql')
    expect(await migrateLines()).toEqual([
      expect.stringMatching(/^Migrating/),
      'Nothing to migrate',
    ])

    // A later schema change, migrated by kiln from now on.
    writeFileSync(
      join(root, 'src/db/schema.ts'),
      SCHEMA.replace('// column', "assignee: text('assignee'),"),
    )
    await run(drizzleKit, ['generate'], { cwd: root })
    const next = await migrateLines()
    expect(next.filter((line) => line.startsWith('✓ '))).toEqual([
      expect.stringMatching(/^✓ app\/0001_\w+\.sql$/),
    ])
    const columns = await query<{ column_name: string }>(
      "select column_name from information_schema.columns where table_name = 'tickets'",
    )
    expect(columns.map((row) => row.column_name)).toContain('assignee')
  }, 120_000)
})
