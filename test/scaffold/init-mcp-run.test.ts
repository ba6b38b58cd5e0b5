import { existsSync, rmSync } from 'node:fs'
import { join, relative } from 'node:path'
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js'
import BetterSqlite3 from 'better-sqlite3'
import { type Browser, chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runMigrate } from '../../src/cli/commands/migrate.ts'
import { createPasswordHasher } from '../../src/core/index.ts'
import { ok } from '../mcp/support/client.ts'
import { isCI } from '../support/env.ts'
import { freePort, type RunningProcess, repoRoot, spawnTs, waitFor } from '../support/processes.ts'
import { allowModel, initializedApp, initMcp, mountAsPrinted } from './support/mcp-app.ts'

const executablePath = process.env.KILN_CHROMIUM ?? '/usr/bin/chromium'
const hasChromium = existsSync(executablePath)

const EMAIL = 'ada@example.com'
const PASSWORD = 'correct horse battery'

/** What an MCP client application keeps: its registration, tokens and PKCE verifier. */
class MemoryProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined
  saved: OAuthTokens | undefined
  verifier = ''
  authorizationUrl: URL | undefined
  constructor(readonly redirectUrl: string) {}
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'MCP SDK client',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }
  }
  clientInformation() {
    return this.client
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }
}

/**
 * A SQLite app as the documented path leaves it (init, make:api, init:mcp, the printed mount
 * step, kiln's migrations, one model uncommented in the policy), started as `npx tsx
 * src/main.ts`: a person signs in and approves in headless Chromium, and the MCP SDK client,
 * with the token it gets, lists the allowed model and nothing else.
 */
describe.skipIf(!hasChromium && !isCI)('an app after kilnjs init:mcp, in a browser', () => {
  let root: string
  let server: RunningProcess | undefined
  let browser: Browser
  let issuer: string

  beforeAll(async () => {
    if (!hasChromium) throw new Error(`CI=true needs chromium at ${executablePath}`)
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
    browser = await chromium.launch({
      executablePath,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    })
  }, 180_000)

  afterAll(async () => {
    await browser?.close()
    await server?.stop()
    if (root) rmSync(root, { recursive: true, force: true })
  })

  it('signs in, reaches the consent page, and the MCP client lists the allowed model', async () => {
    const serverUrl = `${issuer}/mcp`
    const provider = new MemoryProvider(`${issuer}/oauth-callback`)
    expect(await auth(provider, { serverUrl })).toBe('REDIRECT')

    const page = await browser.newPage()
    await page.goto(String(provider.authorizationUrl))
    expect(new URL(page.url()).pathname).toBe('/login')
    await page.getByLabel('Email').fill(EMAIL)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('button', { name: 'Approve' }).waitFor()
    expect(await page.textContent('body')).toContain('MCP SDK client')
    await Promise.all([
      page.waitForURL((url) => url.pathname === '/oauth-callback'),
      page.getByRole('button', { name: 'Approve' }).click(),
    ])
    const code = new URL(page.url()).searchParams.get('code') ?? ''
    expect(await auth(provider, { serverUrl, authorizationCode: code })).toBe('AUTHORIZED')

    const client = new Client({ name: 'init-mcp-test', version: '1' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider }),
    )
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
  }, 120_000)
})
