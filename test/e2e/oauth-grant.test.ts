import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, ok } from '../mcp/support/client.ts'
import { executablePath, hasChromium } from '../support/chromium.ts'
import { type DemoServer, startDemoServer } from '../support/demo-server.ts'
import { isCI } from '../support/env.ts'
import { MemoryOAuthProvider } from '../support/memory-oauth-provider.ts'

if (!hasChromium && !isCI) {
  console.warn(`kiln tests: no chromium at ${executablePath}; the grant browser test is skipped.`)
}

const EMAIL = 'demo@example.com'
const PASSWORD = 'correct horse battery'

describe.skipIf(!hasChromium && !isCI)('granting an assistant less than it asked for', () => {
  let browser: Browser
  let origin: string
  let demo: DemoServer | undefined

  beforeAll(async () => {
    demo = await startDemoServer({
      MCP_TOKEN_SECRET: 'grant-browser-secret-0123456789-abcdefgh',
      DEMO_EMAIL: EMAIL,
      DEMO_PASSWORD: PASSWORD,
    })
    ;({ origin, browser } = demo)
  }, 120_000)

  afterAll(async () => demo?.close())

  it('approves posts for reading only: tools/list holds the read tools alone and a write is refused', async () => {
    const provider = new MemoryOAuthProvider(`${origin}/oauth-test-callback`, {
      client_name: 'Grant Test Assistant',
      scope: 'mcp:read mcp:write',
    })
    const url = new URL(`${origin}/mcp`)
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider })
    await expect(new Client({ name: 't', version: '1' }).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError,
    )

    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(provider.authorizationUrl!.toString())
    await page.getByLabel('Email').fill(EMAIL)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('button', { name: 'Approve' }).waitFor()
    // The page offers exactly what the demo's policy allows for the requested scopes.
    const offered = await page
      .locator('#grant input[type=checkbox]')
      .evaluateAll((boxes) => boxes.map((box) => (box as HTMLInputElement).value))
    expect(offered).toEqual([
      'comments:read',
      'comments:create',
      'posts:read',
      'posts:create',
      'posts:update',
      'posts:delete',
    ])
    // Read posts, nothing else.
    for (const value of offered.filter((value) => value !== 'posts:read')) {
      await page.locator(`#grant input[value="${value}"]`).uncheck()
    }
    await Promise.all([
      page.waitForURL(/oauth-test-callback/),
      page.getByRole('button', { name: 'Approve' }).click(),
    ])
    const code = new URL(page.url()).searchParams.get('code') ?? ''
    await context.close()
    await first.finishAuth(code)
    expect(provider.saved?.scope).toBe('mcp:read')

    const client = new Client({ name: 'grant-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }))
    try {
      const { tools } = await client.listTools()
      // Reading is crud_list and its sibling crud_aggregate (counts and sums under the same
      // grant); no writing tool is listed.
      expect(tools.map((tool) => tool.name)).toEqual(['crud_list', 'crud_aggregate'])
      const listed = await ok<{ total: number }>(client, 'crud_list', { model: 'posts' })
      expect(listed.total).toBe(0)
      // A write is refused: the tool is not listed, and a call to it anyway is answered as the
      // docs say (the read-only token lacks the write scope, checked before the grant).
      const write = await call(client, 'crud_create', {
        model: 'posts',
        data: { title: 'no', body: 'no' },
      })
      expect(write.isError).toBe(true)
      expect(write.text).toBe('crud_create needs the mcp:write scope')
      // Comments were not granted: neither listed nor included.
      const comments = await call(client, 'crud_list', { model: 'comments' })
      expect(comments).toMatchObject({ isError: true })
      expect(comments.text).toContain('Not granted')
      const included = await call(client, 'crud_list', { model: 'posts', include: ['comments'] })
      expect(included).toMatchObject({ isError: true })
      expect(included.text).toContain('Not granted: crud_list on comments')
    } finally {
      await client.close()
    }
  }, 60_000)
})
