import { rmSync } from 'node:fs'
import { join, relative } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runMigrate } from '../../src/cli/commands/migrate.ts'
import { createPasswordHasher } from '../../src/session/index.ts'
import { ok } from '../mcp/support/client.ts'
import { freePort, type RunningProcess, repoRoot, spawnTs, waitFor } from '../support/processes.ts'
import { connectThroughConsent, launchChromium, skipBrowser } from './support/consent.ts'
import { allowModel, initializedApp, initMcp, mountAsPrinted } from './support/mcp-app.ts'

const EMAIL = 'ada@example.com'
const PASSWORD = 'correct horse battery'

/**
 * A SQLite app as the documented path leaves it (init, make:api, init:mcp, the printed mount
 * step, kiln's migrations, one model uncommented in the policy), started as `npx tsx
 * src/main.ts`: a person signs in and approves in headless Chromium, and the MCP SDK client,
 * with the token it gets, lists the allowed model and nothing else; each call is audited.
 */
describe.skipIf(skipBrowser)('an app after kilnjs init:mcp, in a browser', () => {
  let root: string
  let server: RunningProcess | undefined
  let browser: Browser
  let issuer: string

  beforeAll(async () => {
    root = await initializedApp('run', 'sqlite', 'users')
    const database = join(root, 'storage/app.db')
    const port = await freePort()
    issuer = `http://127.0.0.1:${port}`
    const env = {
      DATABASE_URL: `sqlite:${database}`,
      MCP_TOKEN_SECRET: 'init-mcp-run-secret-0123456789-abcdefgh',
      APP_URL: issuer,
      PORT: String(port),
      HOST: '127.0.0.1',
    }
    const { output } = await initMcp(root, env)
    mountAsPrinted(root, output)
    allowModel(root, 'notes')
    await runMigrate({ cwd: root, env, print: () => {} })
    // The app's own tables (drizzle-kit would write them), a user and a note.
    const sqlite = new BetterSqlite3(database)
    sqlite.exec(
      'CREATE TABLE users (id integer PRIMARY KEY AUTOINCREMENT, email text NOT NULL UNIQUE, password text NOT NULL);' +
        'CREATE TABLE notes (id integer PRIMARY KEY AUTOINCREMENT, body text NOT NULL);',
    )
    const hash = await createPasswordHasher().hash(PASSWORD)
    sqlite.prepare('INSERT INTO users (email, password) VALUES (?, ?)').run(EMAIL, hash)
    sqlite.prepare('INSERT INTO notes (body) VALUES (?)').run('the first note')
    sqlite.close()

    server = spawnTs(relative(repoRoot, join(root, 'src/main.ts')), [], { cwd: root, env })
    await waitFor(async () => {
      if (server?.child.exitCode !== null) throw new Error(`the app exited: ${server?.output()}`)
      return fetch(`${issuer}/.well-known/oauth-authorization-server`).then(
        (response) => response.ok,
        () => false,
      )
    }, 'the generated app')
    browser = await launchChromium()
  }, 180_000)

  afterAll(async () => {
    await browser?.close()
    await server?.stop()
    if (root) rmSync(root, { recursive: true, force: true })
  })

  it('signs in, reaches the consent page, and the MCP client lists the allowed model', async () => {
    const serverUrl = `${issuer}/mcp`
    // What getting-started.md says you should see once it runs.
    const challenge = await fetch(serverUrl)
    expect(challenge.status).toBe(401)
    expect(challenge.headers.get('www-authenticate')).toContain(
      `resource_metadata="${issuer}/.well-known/oauth-protected-resource/mcp"`,
    )
    const metadata = await fetch(`${issuer}/.well-known/oauth-authorization-server`)
    expect(await metadata.json()).toMatchObject({ issuer, token_endpoint: `${issuer}/token` })

    const client = await connectThroughConsent(browser, issuer, {
      email: EMAIL,
      password: PASSWORD,
    })
    try {
      const notes = await ok<{ records: { body: string }[] }>(client, 'crud_list', {
        model: 'notes',
      })
      expect(notes.records.map((note) => note.body)).toEqual(['the first note'])
      // The users table stays commented out in the policy: assistants do not reach it.
      const users = await client.callTool({ name: 'crud_list', arguments: { model: 'users' } })
      expect(users.isError).toBe(true)
    } finally {
      await client.close()
    }
    // Audited by default: the call is in kiln_mcp_audit once its batch is written (1 s).
    let audited: Array<{ tool: string; model: string; outcome: string }> = []
    await waitFor(() => {
      const sqlite = new BetterSqlite3(join(root, 'storage/app.db'), { readonly: true })
      try {
        audited = sqlite
          .prepare('SELECT tool, model, outcome FROM kiln_mcp_audit ORDER BY id')
          .all() as typeof audited
      } finally {
        sqlite.close()
      }
      return audited.length > 0
    }, 'the audit entries')
    expect(audited[0]).toMatchObject({ tool: 'crud_list', model: 'notes', outcome: 'ok' })
  }, 120_000)
})
