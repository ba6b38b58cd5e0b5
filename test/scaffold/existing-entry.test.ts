import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { promisify, stripVTControlCharacters } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { runInit } from '../../src/cli/commands/init.ts'
import { runMakeApi } from '../../src/cli/commands/make-api.ts'

const run = promisify(execFile)
const repo = resolve(import.meta.dirname, '../..')
const root = join(repo, 'tmp', `existing-entry-${process.pid}`)

const MAIN = `import { serve } from '@hono/node-server'
import { drizzle } from 'drizzle-orm/node-postgres'
import { Hono } from 'hono'

const db = drizzle(process.env.DATABASE_URL ?? '')
const app = new Hono()
app.get('/', (c) => c.text('tickets'))
// kiln
serve({ fetch: app.fetch, port: 3000 })
`

/** The lines printed under a heading, up to the next blank line, without their indent. */
function block(lines: string[], heading: RegExp): string[] {
  const start = lines.findIndex((line) => heading.test(line))
  expect(start, lines.join('\n')).toBeGreaterThanOrEqual(0)
  const end = lines.findIndex((line, i) => i > start && /^\s*$|^\s*\d+\. /.test(line))
  return lines.slice(start + 1, end < 0 ? undefined : end).map((line) => line.trim())
}

afterAll(() => rmSync(root, { recursive: true, force: true }))

describe("kiln in an app's own entry point", () => {
  it('init and make:api print the same short wiring, reusing the app pool, and it type-checks', async () => {
    rmSync(root, { recursive: true, force: true })
    mkdirSync(join(root, 'src/db'), { recursive: true })
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'tickets', type: 'module' }))
    writeFileSync(
      join(root, 'src/db/schema.ts'),
      "import { pgTable, serial, text } from 'drizzle-orm/pg-core'\n\nexport const tickets = pgTable('tickets', { id: serial('id').primaryKey(), title: text('title').notNull() })\n",
    )
    writeFileSync(join(root, 'src/main.ts'), MAIN)
    const initLines: string[] = []
    await runInit({
      cwd: root,
      main: 'src/main.ts',
      yes: true,
      env: { DATABASE_URL: 'postgres://app@127.0.0.1:5432/tickets' },
      print: (line) => initLines.push(stripVTControlCharacters(line)),
    })
    const fromInit = block(initLines, /^Mount the API in src\/main\.ts/)
    expect(fromInit).toContain(
      "import { apiKeyProvider, apiRoutes, docsRoutes } from './api/index.js'",
    )
    expect(fromInit.join('\n')).toContain('createDatabase(db.$client)')
    expect(fromInit.length).toBeLessThanOrEqual(10)
    expect(initLines.join('\n')).not.toContain('serve({')
    // DATABASE_URL is set already: no step asks to export it.
    expect(initLines.join('\n')).not.toContain('export DATABASE_URL')

    const makeApiLines: string[] = []
    await runMakeApi({
      cwd: root,
      all: true,
      yes: true,
      print: (line) => makeApiLines.push(stripVTControlCharacters(line)),
    })
    const fromMakeApi = block(makeApiLines, /Mount the API in src\/main\.ts/)
    expect(fromMakeApi).toEqual(fromInit)

    // The lines, pasted where the app marks it, make an entry point that type-checks.
    const imports = fromInit.filter((line) => line.startsWith('import '))
    const body = fromInit.filter((line) => line !== '' && !line.startsWith('import '))
    writeFileSync(
      join(root, 'src/main.ts'),
      `${imports.join('\n')}\n${MAIN.replace('// kiln', body.join('\n'))}`,
    )
    writeFileSync(
      join(root, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'nodenext',
          target: 'es2022',
          skipLibCheck: true,
          noEmit: true,
          allowImportingTsExtensions: true,
          paths: { 'kilnjs/*': [`${repo}/src/*/index.ts`] },
        },
        include: ['src'],
      }),
    )
    const tsc = await run(join(repo, 'node_modules/.bin/tsc'), ['-p', root]).catch(
      (error: { stdout: string }) => error,
    )
    expect('stdout' in tsc ? tsc.stdout : '').toBe('')
    expect(readFileSync(join(root, 'src/main.ts'), 'utf8')).toContain('createDatabase(db.$client)')
  }, 240_000)

  it('asks to export DATABASE_URL when it is not set', async () => {
    const lines: string[] = []
    await runInit({ cwd: root, yes: true, env: {}, print: (line) => lines.push(line) })
    expect(stripVTControlCharacters(lines.join('\n'))).toContain('export DATABASE_URL=')
  }, 60_000)
})
