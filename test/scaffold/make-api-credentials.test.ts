import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import type { ListQueryDefinition } from '../../src/api/index.ts'
import { runMakeApi } from '../../src/cli/commands/make-api.ts'

const repo = resolve(import.meta.dirname, '../..')

/** Three columns the wider credential net catches, one it does not, and none of the eight names. */
const SCHEMA = `import { integer, pgTable, serial, text } from 'drizzle-orm/pg-core'

export const clients = pgTable('clients', {
  id: serial('id').primaryKey(),
  name: text('name').notNull(),
  tokenCount: integer('token_count').notNull().default(0),
  apiKeyPrefix: text('api_key_prefix'),
  clientSecret: text('client_secret'),
  resetPasswordToken: text('reset_password_token'),
})
`

let counter = 0
const apps: string[] = []
afterEach(() => {
  for (const root of apps.splice(0)) rmSync(root, { recursive: true, force: true })
})

function makeApp(): string {
  const root = join(repo, 'tmp', `make-api-credentials-${process.pid}-${++counter}`)
  rmSync(root, { recursive: true, force: true })
  mkdirSync(join(root, 'src'), { recursive: true })
  mkdirSync(join(root, 'migrations'))
  writeFileSync(join(root, 'migrations/0001_init.sql'), '-- the app tables\n')
  writeFileSync(join(root, 'src/schema.ts'), SCHEMA)
  writeFileSync(
    join(root, 'kiln.config.ts'),
    "import { defineConfig } from 'kilnjs'\nexport default defineConfig({ dialect: 'postgres', schema: './src/schema.ts', out: './src/api', migrations: './migrations' })\n",
  )
  apps.push(root)
  return root
}

/** `kilnjs make:api <args>` with `input` piped to its standard input (no terminal). */
function makeApiPiped(root: string, args: string[], input: string) {
  const child = spawn(process.execPath, [join(repo, 'bin/kiln.js'), 'make:api', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? root, NO_COLOR: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk) => {
    output += chunk
  })
  child.stderr.on('data', (chunk) => {
    output += chunk
  })
  child.stdin.end(input)
  return new Promise<{ code: number | null; output: string }>((done) => {
    child.on('close', (code) => done({ code, output: stripVTControlCharacters(output) }))
  })
}

const read = (root: string, file: string) => readFileSync(join(root, 'src/api', file), 'utf8')

async function fieldsOf(root: string): Promise<string[]> {
  // Importing the controller runs its defineResource: a credential it shows must be exposed.
  const module = (await import(join(root, 'src/api/controllers/clients.ts'))) as {
    clientsResource: ListQueryDefinition
  }
  return module.clientsResource.fields.map((field) => field.name)
}

describe('make:api and columns that look like credentials', () => {
  it('lists them and asks about each, one answer per line of piped input', async () => {
    const root = makeApp()
    // Expose api_key_prefix, keep client_secret and reset_password_token hidden, then write.
    const { code, output } = await makeApiPiped(root, ['--all'], 'y\nn\n\ny\n')
    expect(code, output).toBe(0)
    expect(output).toContain('These columns look like credentials')
    for (const column of ['api_key_prefix', 'client_secret', 'reset_password_token']) {
      expect(output).toContain(`Expose clients.${column}? [y/N]`)
    }
    expect(output).not.toContain('Expose clients.token_count')
    expect(output).toContain(
      'ℹ Hidden as credentials: clients.client_secret, clients.reset_password_token',
    )
    expect(output).toContain(
      '! Exposed although they look like credentials: clients.api_key_prefix',
    )
    const resource = read(root, 'resources/client.ts')
    expect(resource).toContain('api_key_prefix:')
    expect(resource).toContain('token_count:')
    expect(resource).not.toContain('client_secret:')
    expect(resource).not.toContain('reset_password_token:')
    expect(read(root, 'requests/client.ts')).not.toMatch(/client_secret|reset_password_token/)
    expect(read(root, 'controllers/clients.ts')).toContain("expose: ['api_key_prefix'],")
    expect(await fieldsOf(root)).toEqual(['id', 'name', 'token_count', 'api_key_prefix'])
  }, 60_000)

  it('input that ends before an answer writes nothing and says to pass --yes', async () => {
    const root = makeApp()
    const { code, output } = await makeApiPiped(root, ['--all'], 'y\n')
    expect(code).toBe(1)
    expect(output).toContain('No answer on standard input: pass --yes')
    expect(() => read(root, 'resources/client.ts')).toThrow()
  }, 60_000)

  it('with --yes they stay hidden and the output says so', async () => {
    const root = makeApp()
    const lines: string[] = []
    await runMakeApi({ cwd: root, all: true, yes: true, print: (line) => lines.push(line) })
    const output = stripVTControlCharacters(lines.join('\n'))
    expect(output).toContain(
      'ℹ Hidden as credentials: clients.api_key_prefix, clients.client_secret, clients.reset_password_token (make:api --expose clients.api_key_prefix shows one)',
    )
    expect(output).not.toContain('Expose clients')
    expect(read(root, 'resources/client.ts')).not.toMatch(
      /(api_key_prefix|client_secret|reset_password_token):/,
    )
    expect(read(root, 'controllers/clients.ts')).not.toContain('expose:')
    expect(await fieldsOf(root)).toEqual(['id', 'name', 'token_count'])
  }, 60_000)

  it('--expose opts one field in by name; a name it does not catch is refused', async () => {
    const root = makeApp()
    await runMakeApi({
      cwd: root,
      all: true,
      yes: true,
      expose: ['clients.reset_password_token'],
      print: () => {},
    })
    expect(read(root, 'resources/client.ts')).toContain('reset_password_token:')
    expect(read(root, 'resources/client.ts')).not.toContain('client_secret:')
    expect(await fieldsOf(root)).toContain('reset_password_token')
    const other = makeApp()
    await expect(
      runMakeApi({ cwd: other, all: true, yes: true, expose: ['clients.name'], print: () => {} }),
    ).rejects.toThrow(/--expose clients\.name: not a column that looks like a credential/)
  }, 60_000)

  it('asks nothing about a model whose controller exists (it is left as it is)', async () => {
    const root = makeApp()
    await runMakeApi({ cwd: root, all: true, yes: true, print: () => {} })
    const asked: string[] = []
    const lines: string[] = []
    await runMakeApi({
      cwd: root,
      all: true,
      print: (line) => lines.push(line),
      confirm: async (message) => {
        asked.push(message)
        return true
      },
    })
    expect(asked).toEqual([])
    expect(lines).toContain('Nothing to write: every file exists.')
  }, 60_000)
})
