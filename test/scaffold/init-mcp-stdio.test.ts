import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import BetterSqlite3 from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runMigrate } from '../../src/cli/commands/migrate.ts'
import { call } from '../mcp/support/client.ts'
import { repoRoot } from '../support/processes.ts'
import { allowModel, initializedApp, initMcp } from './support/mcp-app.ts'

/**
 * `kilnjs mcp` over stdio on an app after `kilnjs init:mcp`: it follows the access policy the
 * app declares (`mcpAccess` in the module kiln.config.ts names), not every model.
 */
describe('kilnjs mcp follows the app’s mcpAccess', () => {
  let root: string
  let client: Client
  let stderr = ''

  beforeAll(async () => {
    root = await initializedApp('stdio', 'sqlite', 'users')
    const database = join(root, 'storage/app.db')
    const env = { DATABASE_URL: `sqlite:${database}` }
    await initMcp(root, env)
    allowModel(root, 'notes')
    await runMigrate({ cwd: root, env, print: () => {} })
    const sqlite = new BetterSqlite3(database)
    sqlite.exec(
      'CREATE TABLE users (id integer PRIMARY KEY AUTOINCREMENT, email text NOT NULL UNIQUE, password text NOT NULL);' +
        'CREATE TABLE notes (id integer PRIMARY KEY AUTOINCREMENT, body text NOT NULL);' +
        "INSERT INTO users (email, password) VALUES ('ada@example.com', 'x');" +
        "INSERT INTO notes (body) VALUES ('the first note');",
    )
    sqlite.close()
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(repoRoot, 'bin/kiln.js'), 'mcp'],
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? root, ...env },
      stderr: 'pipe',
    })
    transport.stderr?.on('data', (chunk) => {
      stderr += chunk
    })
    client = new Client({ name: 'kiln-stdio-policy-test', version: '1.0.0' })
    await client.connect(transport)
  }, 180_000)

  afterAll(async () => {
    await client?.close()
    if (root) rmSync(root, { recursive: true, force: true })
  })

  it('names the module in kiln.config.ts, and serves only what mcpAccess allows', async () => {
    expect(readFileSync(join(root, 'kiln.config.ts'), 'utf8')).toContain("mcp: './src/mcp.ts',")
    expect(stderr).toContain('following mcpAccess in ./src/mcp.ts')
    const { tools } = await client.listTools()
    const dataTools = tools.map((tool) => tool.name).filter((name) => name.startsWith('crud_'))
    expect(dataTools.sort()).toEqual(['crud_aggregate', 'crud_list'])
    const notes = await call(client, 'crud_list', { model: 'notes' })
    expect(notes.isError).toBe(false)
    expect(notes.json).toMatchObject({ total: 1 })
    // users is commented out in the generated policy: out of reach.
    const users = await call(client, 'crud_list', { model: 'users' })
    expect(users.isError).toBe(true)
    expect(users.text).toBe('Unknown model "users". Valid models: notes')
  })
})
