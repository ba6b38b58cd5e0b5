import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { eq } from 'drizzle-orm'
import type { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DemoContext } from '../../examples/demo/src/context.ts'
import { posts, users } from '../../examples/demo/src/schema.ts'
import { signIn } from '../demo/support.ts'
import { type ServedDemo, serveDemo } from '../support/demo-server.ts'
import { call, ok } from './support/client.ts'
import { HeadlessOAuthProvider } from './support/http-app.ts'

const EMAIL = 'demo@example.com'
const PASSWORD = 'correct horse battery'

describe('the demo app /mcp endpoint', () => {
  let ctx: DemoContext
  let app: Hono
  let demo: ServedDemo | undefined
  let origin: string

  beforeAll(async () => {
    demo = await serveDemo({
      MCP_TOKEN_SECRET: 'demo-mcp-test-secret-0123456789-abcdef',
      DEMO_EMAIL: EMAIL,
      DEMO_PASSWORD: PASSWORD,
    })
    ;({ origin, ctx, app } = demo)
  }, 120_000)

  afterAll(async () => demo?.close())

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

  /** Signs in through the demo's OAuth flow (DCR, consent, token) and connects a 2025 client. */
  async function connectDemoClient(cookie: string): Promise<Client> {
    const provider = new HeadlessOAuthProvider(cookie)
    const url = new URL(`${origin}/mcp`)
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider })
    await expect(new Client({ name: 't', version: '1' }).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError,
    )
    await first.finishAuth(provider.code!)
    const client = new Client({ name: 'demo-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }))
    return client
  }

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
      const [demoUser] = await ctx.database.db
        .select({ id: users.id })
        .from(users)
        .where(eq(users.email, EMAIL))
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name).sort()).toEqual([
        'crud_aggregate',
        'crud_create',
        'crud_delete',
        'crud_list',
        'crud_update',
      ])
      const post = await ok(client, 'crud_create', {
        model: 'posts',
        data: { title: 'Written by an assistant', body: 'Hello', author_id: demoUser!.id },
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
      const page = await ok<{ total: number }>(client, 'crud_list', { model: 'comments' })
      expect(page.total).toBeGreaterThanOrEqual(0)
    } finally {
      await client.close()
    }
  }, 60_000)

  it("keeps the users table, credentials and other authors' posts out of an approved client's reach", async () => {
    const jar = await signIn(app, EMAIL, PASSWORD)
    const client = await connectDemoClient(jar.header())
    try {
      const [other] = await ctx.database.db
        .insert(users)
        .values({ email: 'other@example.com', name: 'Other', passwordHash: 'scrypt$x' })
        .returning()
      const [theirs] = await ctx.database.db
        .insert(posts)
        .values({ title: 'Theirs', body: 'b', authorId: other!.id })
        .returning()
      const before = await ctx.database.db.select().from(users)
      for (const [tool, args] of [
        ['crud_list', { model: 'users' }],
        ['crud_update', { model: 'users', id: other!.id, data: { password_hash: 'scrypt$mine' } }],
        ['crud_update', { model: 'users', id: other!.id, data: { remember_token: 't' } }],
        ['crud_create', { model: 'users', data: { email: 'x@example.com', name: 'X' } }],
      ] as const) {
        const outcome = await call(client, tool, args)
        expect(outcome).toMatchObject({ isError: true })
        expect(outcome.text).toMatch(/Unknown model "users"/)
      }
      // Nor through include: the hidden users model is no relation of posts.
      const author = await call(client, 'crud_list', { model: 'posts', include: ['author'] })
      expect(author).toMatchObject({ isError: true })
      expect(author.text).toMatch(/include: "author" is not a relation/)
      expect(author.text).not.toMatch(/password|email/)
      const withComments = await ok<{ records: Array<Record<string, unknown>> }>(
        client,
        'crud_list',
        { model: 'posts', include: ['comments'], filters: { title: { eq: 'Theirs' } } },
      )
      expect(withComments.records).toEqual([
        expect.objectContaining({ title: 'Theirs', comments: [] }),
      ])
      const forged = await call(client, 'crud_create', {
        model: 'posts',
        data: { title: 'Forged', body: 'b', author_id: other!.id },
      })
      expect(forged).toMatchObject({ isError: true, text: 'Not allowed: crud_create on posts' })
      const hijack = await call(client, 'crud_update', {
        model: 'posts',
        id: theirs!.id,
        data: { title: 'Mine now' },
      })
      expect(hijack).toMatchObject({ isError: true, text: 'Not allowed: crud_update on posts' })
      const dated = await call(client, 'crud_create', {
        model: 'comments',
        data: {
          post_id: theirs!.id,
          author_name: 'a',
          body: 'b',
          created_at: '1999-01-01T00:00:00Z',
        },
      })
      expect(dated.text).toMatch(/Unknown field\(s\) for create on comments: "created_at"/)
      expect(await ctx.database.db.select().from(users)).toEqual(before)
      const [post] = await ctx.database.db.select().from(posts).where(eq(posts.id, theirs!.id))
      expect(post!.title).toBe('Theirs')
    } finally {
      await client.close()
    }
  }, 60_000)
})
