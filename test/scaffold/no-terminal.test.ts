import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const repo = resolve(import.meta.dirname, '../..')
const apps: string[] = []

const SCHEMA = `import { pgTable, serial, text } from 'drizzle-orm/pg-core'

export const notes = pgTable('notes', {
  id: serial('id').primaryKey(),
  body: text('body').notNull(),
})
`

function makeApp(name: string): string {
  const root = join(repo, 'tmp', `no-terminal-${name}-${process.pid}`)
  rmSync(root, { recursive: true, force: true })
  mkdirSync(join(root, 'src/db'), { recursive: true })
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name, type: 'module' }))
  writeFileSync(join(root, 'src/db/schema.ts'), SCHEMA)
  apps.push(root)
  return root
}

/**
 * The kilnjs command as a script runs it: no terminal; standard input is /dev/null
 * (`input` undefined) or a pipe holding `input`.
 */
function kiln(root: string, args: string[], input?: string) {
  const child = spawn(process.execPath, [join(repo, 'bin/kiln.js'), ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? root, NO_COLOR: '1' },
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (chunk) => {
    output += chunk
  })
  child.stderr!.on('data', (chunk) => {
    output += chunk
  })
  if (input !== undefined) child.stdin!.end(input)
  return new Promise<{ code: number | null; output: string }>((done) => {
    child.on('close', (code) => done({ code, output: stripVTControlCharacters(output) }))
  })
}

afterAll(() => {
  for (const root of apps) rmSync(root, { recursive: true, force: true })
})

describe('init and make:api from a script, as docs/getting-started.md writes them', () => {
  it('write with the defaults when no one is there to answer', async () => {
    const root = makeApp('defaults')
    const init = await kiln(root, ['init', '--main', 'src/main.ts'])
    expect(init.code, init.output).toBe(0)
    expect(init.output).not.toContain('Not a terminal')
    expect(init.output).toContain('Write 3 file(s)? [Y/n] yes (no input: the default)')
    expect(init.output).toContain('Wrote 3 file(s).')
    for (const file of ['kiln.config.ts', 'drizzle.config.ts', 'src/main.ts']) {
      expect(existsSync(join(root, file)), file).toBe(true)
    }
    const makeApi = await kiln(root, ['make:api', '--all'])
    expect(makeApi.code, makeApi.output).toBe(0)
    expect(makeApi.output).toContain('(no input: the default)')
    expect(existsSync(join(root, 'src/api/controllers/notes.ts'))).toBe(true)
  }, 60_000)

  it('never print `create` for a file that an answer kept from being written', async () => {
    const root = makeApp('refused')
    const init = await kiln(root, ['init'], 'n\n')
    expect(init.code, init.output).toBe(0)
    expect(init.output).toContain('  new    kiln.config.ts')
    expect(init.output).toContain('Nothing written.')
    expect(init.output).not.toMatch(/^\s*create /m)
    expect(existsSync(join(root, 'kiln.config.ts'))).toBe(false)
  }, 60_000)

  it('with --yes list what they wrote as `create`', async () => {
    const root = makeApp('yes')
    const init = await kiln(root, ['init', '--yes'])
    expect(init.code, init.output).toBe(0)
    expect(init.output).toMatch(/^ {2}create kiln\.config\.ts$/m)
    expect(init.output).not.toContain('[Y/n]')
  }, 60_000)
})

describe("init's next steps", () => {
  it('install redoc beside the peers: the last step opens /api/docs', async () => {
    const root = makeApp('redoc')
    const init = await kiln(root, ['init', '--yes'])
    expect(init.output).toContain('npm install hono @hono/node-server drizzle-orm zod pg redoc')
  }, 60_000)
})
