import { eq } from 'drizzle-orm'
import type { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { passwords } from '../../examples/demo/src/auth.ts'
import { users } from '../../examples/demo/src/schema.ts'
import { s256Challenge } from '../../src/oauth/protocol/pkce.ts'
import { consentChoices } from '../support/consent-choices.ts'
import { type DemoUnderTest, hiddenInput, signIn, startDemo } from './support.ts'

const ISSUER = 'http://127.0.0.1:3000'
const VERIFIER = 'grants-end-verifier-0123456789-abcdefghijklmnopqrstu'
const REDIRECT = 'http://127.0.0.1:9/callback'

interface Tokens {
  access_token: string
  refresh_token: string
}

/** Registers a client, signs in, approves on the consent page and exchanges the code. */
async function connect(
  app: Hono,
  email: string,
  password: string,
): Promise<Tokens & { clientId: string }> {
  const registered = await app.request('/register', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Stamp Test Client',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
    }),
  })
  expect(registered.status).toBe(201)
  const { client_id: clientId } = (await registered.json()) as { client_id: string }
  const authorize = `/authorize?${new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: s256Challenge(VERIFIER),
    code_challenge_method: 'S256',
    scope: 'mcp:read',
  })}`
  const jar = await signIn(app, email, password, authorize)
  const page = await app.request(authorize, { headers: { cookie: jar.header() } })
  expect(page.status).toBe(200)
  const html = await page.text()
  const decided = await app.request('/authorize', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
    body: new URLSearchParams([
      ['decision', 'approve'],
      ['request_id', hiddenInput(html, 'request_id')],
      ['csrf_token', hiddenInput(html, 'csrf_token')],
      ...consentChoices(html),
    ]).toString(),
  })
  expect(decided.status).toBe(303)
  const code = new URL(decided.headers.get('location') ?? '').searchParams.get('code') ?? ''
  const token = await app.request('/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      code_verifier: VERIFIER,
      redirect_uri: REDIRECT,
      client_id: clientId,
    }).toString(),
  })
  expect(token.status).toBe(200)
  return { ...((await token.json()) as Tokens), clientId }
}

function refresh(app: Hono, clientId: string, refreshToken: string) {
  return app.request('/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: clientId,
    }).toString(),
  })
}

function callMcp(app: Hono, accessToken: string) {
  return app.request('/mcp', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${accessToken}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'stamp-test', version: '1.0.0' },
      },
    }),
  })
}

/** Token and refresh work; returns the newest pair. */
async function workingTokens(app: Hono, email: string, password: string) {
  const first = await connect(app, email, password)
  expect((await callMcp(app, first.access_token)).status).toBe(200)
  const refreshed = await refresh(app, first.clientId, first.refresh_token)
  expect(refreshed.status).toBe(200)
  const tokens = (await refreshed.json()) as Tokens
  expect((await callMcp(app, tokens.access_token)).status).toBe(200)
  return { ...tokens, clientId: first.clientId }
}

async function expectEnded(app: Hono, tokens: Tokens & { clientId: string }) {
  const mcp = await callMcp(app, tokens.access_token)
  expect(mcp.status).toBe(401)
  expect(mcp.headers.get('www-authenticate')).toContain('error="invalid_token"')
  const refreshed = await refresh(app, tokens.clientId, tokens.refresh_token)
  expect(refreshed.status).toBe(400)
  expect(await refreshed.json()).toMatchObject({ error: 'invalid_grant' })
}

describe('demo: OAuth grants end with the credentials they were approved with', () => {
  let demo: DemoUnderTest

  beforeAll(async () => {
    demo = await startDemo({
      env: { APP_URL: ISSUER, MCP_TOKEN_SECRET: 'stamp-test-secret-0123456789-abcdefghij' },
    })
  }, 60_000)
  afterAll(() => demo?.close())

  it('a password changed in the database ends access and refresh tokens', async () => {
    const email = 'changes@example.com'
    await demo.ctx.database.db
      .insert(users)
      .values({ email, name: 'Changes', passwordHash: await passwords.hash('first password') })
    const tokens = await workingTokens(demo.app, email, 'first password')
    await demo.ctx.database.db
      .update(users)
      .set({ passwordHash: await passwords.hash('second password') })
      .where(eq(users.email, email))
    await expectEnded(demo.app, tokens)
    // Approving again with the new password works: only the old grants ended.
    await workingTokens(demo.app, email, 'second password')
  })

  it('a user deleted in the database ends access and refresh tokens', async () => {
    const email = 'leaves@example.com'
    await demo.ctx.database.db
      .insert(users)
      .values({ email, name: 'Leaves', passwordHash: await passwords.hash('a password') })
    const tokens = await workingTokens(demo.app, email, 'a password')
    await demo.ctx.database.db.delete(users).where(eq(users.email, email))
    await expectEnded(demo.app, tokens)
  })
})
