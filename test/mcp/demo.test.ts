import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDemoApp } from '../../examples/demo/src/app.ts'
import { createDemoContext, type DemoContext } from '../../examples/demo/src/context.ts'
import { silentLogger } from '../../src/core/index.ts'
import { signIn } from '../demo/support.ts'
import { call, ok } from './support/client.ts'
import { HeadlessOAuthProvider } from './support/http-app.ts'

const EMAIL = 'demo@example.com'
const PASSWORD = 'correct horse battery'

describe('the demo app /mcp endpoint', () => {
  let ctx: DemoContext
  let app: Hono
  let server: ReturnType<typeof serve>
  let origin: string

  beforeAll(async () => {
    let handler: Hono | undefined
    server = serve({
      fetch: (request) => (handler ? handler.fetch(request) : new Response(null, { status: 503 })),
      port: 0,
      hostname: '127.0.0.1',
    })
    await new Promise<void>((resolve) => server.once('listening', () => resolve()))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    ctx = await createDemoContext({
      databaseUrl: 'pglite:',
      logger: silentLogger(),
      env: {
        APP_URL: origin,
        MCP_TOKEN_SECRET: 'demo-mcp-test-secret-0123456789-abcdef',
        DEMO_EMAIL: EMAIL,
        DEMO_PASSWORD: PASSWORD,
      },
    })
    app = await createDemoApp(ctx)
    handler = app
  }, 120_000)

  afterAll(async () => {
    await new Promise<void>((resolve) => {
      ;(server as { closeAllConnections?: () => void }).closeAllConnections?.()
      server.close(() => resolve())
    })
    await ctx?.close()
  })

  it('answers 401 with the resource metadata, and preflights without a token', async () => {
    const response = await fetch(`${origin}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toContain(
      `resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
    )
    const preflight = await fetch(`${origin}/mcp`, {
      method: 'OPTIONS',
      headers: { origin: 'https://claude.ai', 'access-control-request-method': 'POST' },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*')
  })

  it('connects an SDK client through login, consent and the token endpoint, then uses the tools', async () => {
    const jar = await signIn(app, EMAIL, PASSWORD)
    const provider = new HeadlessOAuthProvider(jar.header())
    const url = new URL(`${origin}/mcp`)
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider })
    await expect(new Client({ name: 't', version: '1' }).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError,
    )
    await first.finishAuth(provider.code!)
    const client = new Client({ name: 'demo-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }))
    try {
      const users = await ok<{ records: Array<Record<string, unknown>>; total: number }>(
        client,
        'crud_list',
        { model: 'users', filters: { email: EMAIL } },
      )
      expect(users.total).toBe(1)
      const demoUser = users.records[0]!
      expect(demoUser).not.toHaveProperty('password_hash')
      expect(demoUser).not.toHaveProperty('remember_token')
      const post = await ok(client, 'crud_create', {
        model: 'posts',
        data: { title: 'Written by an assistant', body: 'Hello', author_id: demoUser.id },
      })
      expect(post).toMatchObject({ title: 'Written by an assistant', published: false })
      const updated = await ok(client, 'crud_update', {
        model: 'Post',
        id: post.id,
        data: { published: true },
      })
      expect(updated.published).toBe(true)
      const bad = await call(client, 'crud_update', {
        model: 'posts',
        id: post.id,
        data: { secret_field: 1 },
      })
      expect(bad.isError).toBe(true)
      expect(await ok(client, 'crud_delete', { model: 'posts', id: post.id })).toMatchObject({
        message: 'Deleted',
      })
    } finally {
      await client.close()
    }
  }, 60_000)
})
