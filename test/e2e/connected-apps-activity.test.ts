import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from '@modelcontextprotocol/client'
import { eq } from 'drizzle-orm'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DemoContext } from '../../examples/demo/src/context.ts'
import { users } from '../../examples/demo/src/schema.ts'
import { type AuditRecord, createAuditLog } from '../../src/db/index.ts'
import { s256Challenge } from '../../src/oauth/protocol/pkce.ts'
import { call, ok } from '../mcp/support/client.ts'
import { hasChromium } from '../support/chromium.ts'
import { type DemoServer, startDemoServer } from '../support/demo-server.ts'
import { isCI } from '../support/env.ts'

const EMAIL = 'demo@example.com'
const PASSWORD = 'correct horse battery'
const VERIFIER = 'activity-test-verifier-0123456789-abcdefghijklmnop'

describe.skipIf(!hasChromium && !isCI)(
  'connected apps with activity, in a headless browser (demo)',
  () => {
    let browser: Browser
    let ctx: DemoContext
    let issuer: string
    let demo: DemoServer | undefined

    beforeAll(async () => {
      demo = await startDemoServer({
        MCP_TOKEN_SECRET: 'activity-test-secret-0123456789-abcdefgh',
        DEMO_EMAIL: EMAIL,
        DEMO_PASSWORD: PASSWORD,
      })
      ;({ origin: issuer, ctx, browser } = demo)
    }, 120_000)

    afterAll(async () => demo?.close())

    async function connect(token: string, era: 'modern' | 'legacy'): Promise<ClientV2> {
      const client = new ClientV2(
        { name: 'activity-test', version: '1.0.0' },
        { versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'legacy' } },
      )
      await client.connect(
        new StreamableHTTPClientTransportV2(new URL(`${issuer}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      )
      return client
    }

    it('shows what the assistant did, pages it, and Revoke ends its tokens at once', async () => {
      const redirectUri = `${issuer}/oauth-test-callback`
      const registered = await fetch(`${issuer}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Activity Test Client', redirect_uris: [redirectUri] }),
      })
      expect(registered.status).toBe(201)
      const clientId = ((await registered.json()) as { client_id: string }).client_id
      const [demoUser] = await ctx.database.db
        .select({ id: users.id })
        .from(users)
        .where(eq(users.email, EMAIL))
      const userId = demoUser!.id

      // The person signs in and approves the assistant in the browser.
      const context = await browser.newContext()
      const page = await context.newPage()
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: redirectUri,
        code_challenge: s256Challenge(VERIFIER),
        code_challenge_method: 'S256',
        scope: 'mcp:read mcp:write',
        state: 'activity',
      })
      await page.goto(`${issuer}/authorize?${query}`)
      await page.getByLabel('Email').fill(EMAIL)
      await page.getByLabel('Password').fill(PASSWORD)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await Promise.all([
        page.waitForURL(/oauth-test-callback/),
        page.getByRole('button', { name: 'Approve' }).click(),
      ])
      const code = new URL(page.url()).searchParams.get('code') ?? ''
      const exchanged = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          code_verifier: VERIFIER,
          redirect_uri: redirectUri,
          client_id: clientId,
        }),
      })
      expect(exchanged.status).toBe(200)
      const token = ((await exchanged.json()) as { access_token: string }).access_token

      // The assistant works over /mcp in both protocol eras.
      const modern = await connect(token, 'modern')
      const post = await ok<{ id: number }>(modern, 'crud_create', {
        model: 'posts',
        data: { title: 'Written by the assistant', body: 'text', author_id: userId },
      })
      for (let i = 0; i < 9; i++) await ok(modern, 'crud_list', { model: 'posts' })
      const refused = await call(modern, 'crud_update', {
        model: 'posts',
        id: post.id,
        data: { author_id: userId + 1000 },
      })
      expect(refused.isError).toBe(true)
      await modern.close()
      const legacy = await connect(token, 'legacy')
      await ok(legacy, 'crud_update', { model: 'posts', id: post.id, data: { title: 'Edited' } })
      const failed = await call(legacy, 'crud_create', { model: 'comments', data: { body: 'x' } })
      expect(failed.isError).toBe(true)
      await legacy.close()

      // Every call is in the audit table with its outcome (written in batches, once a second).
      const log = createAuditLog(ctx.database)
      let entries: AuditRecord[] = []
      await expect
        .poll(
          async () => {
            entries = await log.list({ clientId })
            return entries.length
          },
          { timeout: 10_000 },
        )
        .toBe(13)
      expect(entries.map((e) => [e.tool, e.outcome]).slice(0, 3)).toEqual([
        ['crud_create', 'error'],
        ['crud_update', 'ok'],
        ['crud_update', 'refused'],
      ])
      expect(entries.at(-1)).toMatchObject({
        tool: 'crud_create',
        model: 'posts',
        outcome: 'ok',
        userId: String(userId),
        clientId,
        recordIds: [post.id],
        fields: ['title', 'body', 'author_id'],
      })

      // The connected-apps page shows it, newest first, ten at a time.
      await page.goto(`${issuer}/connected-apps`)
      const activity = page.getByRole('region', { name: 'Activity of Activity Test Client' })
      const rows = activity.locator('tbody tr')
      await expect.poll(() => rows.count()).toBe(10)
      expect(await rows.nth(0).textContent()).toMatch(/created comments \(body\).*failed/)
      expect(await rows.nth(1).textContent()).toMatch(/updated posts #\d+ \(title\).*done/)
      expect(await rows.nth(2).textContent()).toMatch(/updated posts #\d+ \(author_id\).*refused/)
      expect(await page.getByLabel('Permissions').textContent()).toContain('mcp:write')
      expect(await page.getByLabel('Granted access').textContent()).toContain('posts')
      await activity.getByRole('link', { name: 'Older activity' }).click()
      await expect.poll(() => rows.count()).toBe(3)
      expect(await rows.nth(2).textContent()).toMatch(
        /created posts #\d+ \(title, body, author_id\).*done/,
      )
      await activity.getByRole('link', { name: 'Newer activity' }).waitFor()

      // Revoke: the next /mcp call with the assistant's token is refused.
      await page.getByRole('button', { name: 'Revoke Activity Test Client' }).click()
      await page.getByText('Access was revoked for the application.').waitFor()
      expect(await page.getByText('No applications are connected').count()).toBe(1)
      const after = await fetch(`${issuer}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'crud_list', arguments: { model: 'posts' } },
        }),
      })
      expect(after.status).toBe(401)
      await context.close()
    }, 120_000)
  },
)
