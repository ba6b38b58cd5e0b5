import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { runMakeApi } from '../../src/cli/commands/make-api.ts'

const repo = resolve(import.meta.dirname, '../..')
const apps: string[] = []

/** An app with its schema and kiln.config.ts, under the repository so `kilnjs` resolves. */
function makeApp(name: string, schema: string, config = "migrations: './migrations'"): string {
  const root = join(repo, 'tmp', `make-api-hints-${name}-${process.pid}`)
  rmSync(root, { recursive: true, force: true })
  mkdirSync(join(root, 'src/db'), { recursive: true })
  writeFileSync(join(root, 'src/db/schema.ts'), schema)
  writeFileSync(
    join(root, 'kiln.config.ts'),
    `import { defineConfig } from 'kilnjs'\nexport default defineConfig({ dialect: 'postgres', schema: './src/db/schema.ts', out: './src/api', ${config} })\n`,
  )
  apps.push(root)
  return root
}

async function makeApi(root: string): Promise<string> {
  const lines: string[] = []
  await runMakeApi({ cwd: root, all: true, yes: true, print: (line) => lines.push(line) })
  return stripVTControlCharacters(lines.join('\n'))
}

afterAll(() => {
  for (const root of apps) rmSync(root, { recursive: true, force: true })
})

describe('make:api and JSON columns typed with $type<>()', () => {
  it('points to typedJson for the ones nothing checks, not for typedJson ones', async () => {
    const root = makeApp(
      'json',
      `import { jsonb, pgTable, serial, text } from 'drizzle-orm/pg-core'
import { typedJson } from 'kilnjs/db'
import { z } from 'zod'

export const tickets = pgTable('tickets', {
  id: serial('id').primaryKey(),
  title: text('title').notNull(),
  meta: jsonb('meta').$type<Record<string, unknown>>(),
  extra: jsonb('extra')
    .notNull()
    .$type<{ tags: string[] }>(),
  plain: jsonb('plain'),
  checked: typedJson(jsonb('checked'), z.object({ a: z.string() })),
})
`,
    )
    const output = await makeApi(root)
    expect(output).toContain(
      "ℹ tickets.meta, tickets.extra: typed with $type<…>() only, which nothing checks at run time, so the API and the MCP tools store any JSON there. To check every write, attach a zod schema with typedJson from 'kilnjs/db': typedJson(jsonb('meta'), schema)",
    )
    expect(output).not.toMatch(/tickets\.(plain|checked)\b.*\$type/)
  }, 60_000)

  it('says nothing when no column uses $type', async () => {
    const root = makeApp(
      'nojson',
      `import { pgTable, serial, text } from 'drizzle-orm/pg-core'

export const notes = pgTable('notes', { id: serial('id').primaryKey(), body: text('body') })
`,
    )
    expect(await makeApi(root)).not.toContain('$type')
  }, 60_000)
})

describe('make:api in an app that applies its migrations with drizzle-kit migrate', () => {
  const NOTES = `import { pgTable, serial, text } from 'drizzle-orm/pg-core'

export const notes = pgTable('notes', { id: serial('id').primaryKey(), body: text('body') })
`

  it("writes the api_keys migration into drizzle-kit's folder and journal, no migrations/", async () => {
    const root = makeApp('drizzle-kit', NOTES, '')
    writeFileSync(
      join(root, 'drizzle.config.ts'),
      "export default { dialect: 'postgresql', schema: './src/db/schema.ts', out: './drizzle' }\n",
    )
    const output = await makeApi(root)
    expect(existsSync(join(root, 'migrations'))).toBe(false)
    expect(existsSync(join(root, 'drizzle/0000_api_keys.sql'))).toBe(true)
    const journal = JSON.parse(readFileSync(join(root, 'drizzle/meta/_journal.json'), 'utf8'))
    expect(journal.entries.map((entry: { tag: string }) => entry.tag)).toEqual(['0000_api_keys'])
    expect(output).toContain(
      "Create kiln's tables: npx kilnjs migrate (kiln.config.ts names no migrations folder: it leaves yours alone)",
    )
    expect(output).toContain(
      "Yours as before: npx drizzle-kit generate && npx drizzle-kit migrate (the api_keys migration is in drizzle-kit's journal in drizzle/, so drizzle-kit applies it too)",
    )
    expect(output).not.toContain('set migrations:')
  }, 60_000)

  it('writes no migration at all without a migrations folder or a drizzle config', async () => {
    const root = makeApp('no-folder', NOTES, '')
    const output = await makeApi(root)
    expect(existsSync(join(root, 'migrations'))).toBe(false)
    expect(output).not.toMatch(/api_keys\.sql/)
    expect(output).toContain("Create kiln's tables: npx kilnjs migrate")
  }, 60_000)
})
