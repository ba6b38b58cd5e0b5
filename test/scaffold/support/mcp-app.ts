import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect } from 'vitest'
import { runInit } from '../../../src/cli/commands/init.ts'
import { runInitMcp } from '../../../src/cli/commands/init-mcp.ts'
import { runMakeApi } from '../../../src/cli/commands/make-api.ts'
import { repoRoot as repo } from '../../support/processes.ts'

export const SCHEMAS = {
  postgres: {
    users: `import { pgTable, serial, text, varchar } from 'drizzle-orm/pg-core'

export const users = pgTable('users', {
  id: serial('id').primaryKey(),
  email: varchar('email', { length: 255 }).notNull().unique(),
  passwordHash: text('password_hash').notNull(),
})

export const notes = pgTable('notes', {
  id: serial('id').primaryKey(),
  body: text('body').notNull(),
})
`,
    plain: `import { pgTable, text, uuid } from 'drizzle-orm/pg-core'

export const notes = pgTable('notes', {
  id: uuid('id').primaryKey().defaultRandom(),
  body: text('body').notNull(),
})
`,
  },
  sqlite: {
    users: `import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

export const users = sqliteTable('users', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  email: text('email').notNull().unique(),
  password: text('password').notNull(),
})

export const notes = sqliteTable('notes', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  body: text('body').notNull(),
})
`,
    plain: `import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

export const notes = sqliteTable('notes', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  body: text('body').notNull(),
})
`,
  },
} as const

export type SchemaKind = keyof (typeof SCHEMAS)['postgres']

// biome-ignore lint/suspicious/noControlCharactersInRegex: colours of the printed lines
export const plain = (line: string) => line.replace(/\u001b\[[0-9;]*m/g, '')

/** An app as `kilnjs init --main` and `make:api --all` leave it, under the repository. */
export async function initializedApp(
  name: string,
  dialect: 'postgres' | 'sqlite',
  kind: SchemaKind,
): Promise<string> {
  const root = join(repo, 'tmp', `init-mcp-${name}-${process.pid}`)
  rmSync(root, { recursive: true, force: true })
  mkdirSync(join(root, 'src/db'), { recursive: true })
  writeFileSync(
    join(root, 'package.json'),
    JSON.stringify({ name, type: 'module', dependencies: { hono: '*', 'drizzle-orm': '*' } }),
  )
  writeFileSync(join(root, 'src/db/schema.ts'), SCHEMAS[dialect][kind])
  const quiet = () => {}
  await runInit({ cwd: root, dialect, main: 'src/main.ts', yes: true, print: quiet })
  await runMakeApi({ cwd: root, all: true, yes: true, print: quiet })
  return root
}

/** `kilnjs init:mcp` as a user runs it: what it printed and which steps it says are missing. */
export async function initMcp(root: string, env: Record<string, string> = {}) {
  const lines: string[] = []
  const result = await runInitMcp({ cwd: root, env, print: (line) => lines.push(plain(line)) })
  return { ...result, output: lines.join('\n') }
}

/** Does the printed mount step: the import and the call, where the step says. */
export function mountAsPrinted(root: string, output: string): void {
  const importLine = output.split('\n').find((line) => line.includes('import { mountMcp }'))
  const callLine = output.split('\n').find((line) => line.includes('mountMcp(app'))
  expect(importLine).toBeDefined()
  expect(callLine).toBeDefined()
  const mainFile = join(root, 'src/main.ts')
  const main = readFileSync(mainFile, 'utf8')
  const anchor = "app.use('*', noSniff(), requestLog({ logger }))\n"
  expect(main).toContain(anchor)
  writeFileSync(
    mainFile,
    `${importLine?.trim()}\n${main.replace(anchor, `${anchor}${callLine?.trim()}\n`)}`,
  )
}

/** Lists a model in the generated policy: the line the developer uncomments. */
export function allowModel(root: string, resource: string): void {
  const file = join(root, 'src/mcp.ts')
  const module = readFileSync(file, 'utf8')
  const line = `    // ${resource}: { tools: ['crud_list'] },`
  expect(module).toContain(line)
  writeFileSync(file, module.replace(line, `    ${resource}: { tools: ['crud_list'] },`))
}
