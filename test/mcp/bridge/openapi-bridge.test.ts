import { spawn } from 'node:child_process'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { serve } from '@hono/node-server'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { Hono } from 'hono'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { buildOpenApiDocument } from '../../../src/api/index.ts'
import {
  createOpenApiBridgeServer,
  fetchOpenApiDocument,
  operationsFromDocument,
  toolName,
} from '../../../src/mcp/bridge/openapi-bridge.ts'
import { freePort, repoRoot } from '../../support/processes.ts'
import { call, connectInMemory } from '../support/client.ts'

const API_KEY = 'kl_test_bridgeKey0123456789abcdefghijklmnopqrstuvw'

interface Seen {
  method: string
  path: string
  query: string
  authorization: string | null
  contentType: string | null
  body: string
}

/** A stand-in kiln API: a posts resource, its OpenAPI document from kiln/api, and a request log. */
function standInApi(seen: Seen[]): Hono {
  const app = new Hono()
  app.use('/api/*', async (c, next) => {
    seen.push({
      method: c.req.method,
      path: c.req.path,
      query: new URL(c.req.url).search,
      authorization: c.req.header('authorization') ?? null,
      contentType: c.req.header('content-type') ?? null,
      body: await c.req.raw.clone().text(),
    })
    if (c.req.header('authorization') !== `Bearer ${API_KEY}`) {
      return c.json({ error: 'Unauthenticated' }, 401)
    }
    await next()
  })
  const post = { id: 7, title: 'Hello', body: 'World' }
  app.get('/api/v1/posts', (c) => c.json({ data: [post], meta: { total: 1 } }))
  app.post('/api/v1/posts', async (c) =>
    c.json({ data: { id: 8, ...(await c.req.json<Record<string, unknown>>()) } }, 201),
  )
  app.get('/api/v1/posts/:id', (c) =>
    c.req.param('id') === '7' ? c.json({ data: post }) : c.json({ error: 'Not Found' }, 404),
  )
  app.put('/api/v1/posts/:id', async (c) =>
    c.json({ data: { ...post, ...(await c.req.json<Record<string, unknown>>()) } }),
  )
  app.delete('/api/v1/posts/:id', (c) => c.json({ message: 'Deleted' }))
  const document = buildOpenApiDocument(app.routes, {
    title: 'Stand-in',
    resources: [
      {
        name: 'posts',
        model: 'Post',
        schema: z.object({ id: z.int(), title: z.string(), body: z.string() }),
        create: z.object({ title: z.string().min(1).max(200), body: z.string() }),
        update: z.object({ title: z.string().min(1).max(200), body: z.string() }).partial(),
      },
    ],
  })
  app.get('/api/openapi.json', (c) => c.json(document))
  return app
}

describe('the OpenAPI bridge', () => {
  const seen: Seen[] = []
  let server: ReturnType<typeof serve>
  let apiUrl: string

  beforeAll(async () => {
    server = serve({ fetch: standInApi(seen).fetch, port: 0, hostname: '127.0.0.1' })
    await new Promise<void>((resolve) => server.once('listening', () => resolve()))
    apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        ;(server as { closeAllConnections?: () => void }).closeAllConnections?.()
        server.close(() => resolve())
      }),
  )
  beforeEach(() => {
    seen.length = 0
  })

  it('names tools from method and path', () => {
    expect(toolName('get', '/api/v1/posts')).toBe('get_posts')
    expect(toolName('post', '/api/v1/posts')).toBe('post_posts')
    expect(toolName('get', '/api/v1/posts/{id}')).toBe('get_posts_by_id')
    expect(toolName('delete', '/api/v2/blog-posts/{post_id}/comments/{id}')).toBe(
      'delete_blog_posts_by_post_id_comments_by_id',
    )
    expect(toolName('get', '/health')).toBe('get_health')
  })

  it('turns every operation of the document into a tool with a JSON input schema', async () => {
    const document = await fetchOpenApiDocument({ apiUrl, apiKey: API_KEY })
    const operations = operationsFromDocument(document)
    const tools = Object.fromEntries(operations.map((o) => [o.tool.name, o.tool]))
    expect(Object.keys(tools).sort()).toEqual([
      'delete_posts_by_id',
      'get_posts',
      'get_posts_by_id',
      'post_posts',
      'put_posts_by_id',
    ])
    expect(tools.get_posts!.inputSchema.properties).toMatchObject({
      page: { type: 'integer' },
      per_page: { type: 'integer' },
    })
    expect(tools.get_posts!.inputSchema.required).toBeUndefined()
    expect(tools.get_posts!.description).toContain('List posts')
    expect(tools.get_posts_by_id!.inputSchema).toMatchObject({
      required: ['id'],
      properties: { id: { type: 'integer' } },
    })
    // One record, or an array of them (a bulk create).
    const record = {
      type: 'object',
      required: ['title', 'body'],
      properties: { title: { type: 'string', minLength: 1, maxLength: 200 } },
    }
    expect(tools.post_posts!.inputSchema).toMatchObject({
      required: ['body'],
      properties: { body: { oneOf: [record, { type: 'array', items: record }] } },
    })
    expect(JSON.stringify(tools)).not.toContain('$ref')
  })

  describe('over the in-memory transport', () => {
    let client: Client
    beforeEach(async () => {
      const document = await fetchOpenApiDocument({ apiUrl, apiKey: API_KEY })
      client = await connectInMemory(
        createOpenApiBridgeServer(operationsFromDocument(document), {
          apiUrl,
          apiKey: API_KEY,
        }) as never,
      )
      seen.length = 0
    })
    afterEach(() => client.close())

    it('calls the API with the key, path, query and JSON body', async () => {
      const list = await call(client, 'get_posts', { page: 2, per_page: 5 })
      expect(list.isError).toBe(false)
      expect(list.json).toEqual({
        data: [{ id: 7, title: 'Hello', body: 'World' }],
        meta: { total: 1 },
      })
      const created = await call(client, 'post_posts', { body: { title: 'New', body: 'Text' } })
      expect(created.json).toEqual({ data: { id: 8, title: 'New', body: 'Text' } })
      await call(client, 'put_posts_by_id', { id: 7, body: { title: 'Changed' } })
      await call(client, 'delete_posts_by_id', { id: 'a/b?c' })
      expect(seen).toEqual([
        {
          method: 'GET',
          path: '/api/v1/posts',
          query: '?page=2&per_page=5',
          authorization: `Bearer ${API_KEY}`,
          contentType: null,
          body: '',
        },
        {
          method: 'POST',
          path: '/api/v1/posts',
          query: '',
          authorization: `Bearer ${API_KEY}`,
          contentType: 'application/json',
          body: '{"title":"New","body":"Text"}',
        },
        {
          method: 'PUT',
          path: '/api/v1/posts/7',
          query: '',
          authorization: `Bearer ${API_KEY}`,
          contentType: 'application/json',
          body: '{"title":"Changed"}',
        },
        {
          method: 'DELETE',
          path: '/api/v1/posts/a%2Fb%3Fc',
          query: '',
          authorization: `Bearer ${API_KEY}`,
          contentType: null,
          body: '',
        },
      ])
    })

    it('returns API errors as tool errors with the status', async () => {
      const missing = await call(client, 'get_posts_by_id', { id: 99 })
      expect(missing.isError).toBe(true)
      expect(missing.text).toMatch(/^GET \/api\/v1\/posts\/99 answered 404: /)
      expect(missing.text).toContain('"error": "Not Found"')
    })

    it('refuses unknown and missing arguments without calling the API', async () => {
      const unknown = await call(client, 'get_posts', { page: 1, sort: 'title; DROP TABLE posts' })
      expect(unknown).toMatchObject({
        isError: true,
        text: 'Unknown argument(s): sort. Valid: page, per_page',
      })
      const noId = await call(client, 'get_posts_by_id', {})
      expect(noId).toMatchObject({ isError: true, text: 'Missing required argument(s): id' })
      const noBody = await call(client, 'post_posts', {})
      expect(noBody).toMatchObject({ isError: true, text: 'Missing required argument(s): body' })
      const objectId = await call(client, 'get_posts_by_id', { id: { x: 1 } })
      expect(objectId.isError).toBe(true)
      const noTool = await call(client, 'get_secrets', {})
      expect(noTool).toMatchObject({ isError: true, text: 'Unknown tool get_secrets' })
      expect(seen).toEqual([])
    })
  })

  describe('kilnjs mcp --api-url --api-key (stdio)', () => {
    it('serves the operations and never writes the key anywhere', async () => {
      let stderr = ''
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [join(repoRoot, 'bin/kiln.js'), 'mcp', '--api-url', apiUrl, '--api-key', API_KEY],
        cwd: repoRoot,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? repoRoot,
          LOG_LEVEL: 'debug',
        },
        stderr: 'pipe',
      })
      transport.stderr?.on('data', (chunk) => {
        stderr += chunk
      })
      const client = new Client({ name: 'bridge-test', version: '1.0.0' })
      await client.connect(transport)
      try {
        const { tools } = await client.listTools()
        expect(tools.map((tool) => tool.name)).toContain('get_posts_by_id')
        const result = await call(client, 'get_posts_by_id', { id: 7 })
        expect(result.json).toEqual({ data: { id: 7, title: 'Hello', body: 'World' } })
        const failed = await call(client, 'get_posts_by_id', { id: 404 })
        expect(failed.text).not.toContain(API_KEY)
      } finally {
        await client.close()
      }
      expect(stderr).not.toContain(API_KEY)
      expect(seen.every((request) => request.authorization === `Bearer ${API_KEY}`)).toBe(true)
    }, 60_000)

    it('fails with one line, without the key, when the API or its document is missing', async () => {
      const run = (args: string[]) =>
        new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
          const child = spawn(process.execPath, [join(repoRoot, 'bin/kiln.js'), 'mcp', ...args], {
            cwd: repoRoot,
            env: { PATH: process.env.PATH ?? '' },
            stdio: ['ignore', 'pipe', 'pipe'],
          })
          let stdout = ''
          let stderr = ''
          child.stdout.on('data', (chunk) => {
            stdout += chunk
          })
          child.stderr.on('data', (chunk) => {
            stderr += chunk
          })
          child.on('close', (status) => resolve({ status, stdout, stderr }))
        })
      const closed = `http://127.0.0.1:${await freePort()}`
      const [unreachable, wrongPath, wrongKey, noKey, badUrl] = await Promise.all([
        run(['--api-url', closed, '--api-key', API_KEY]),
        run(['--api-url', apiUrl, '--api-key', API_KEY, '--spec-path', '/api/nope.json']),
        run(['--api-url', apiUrl, '--api-key', 'kl_test_wrong']),
        run(['--api-url', apiUrl]),
        run(['--api-url', 'ftp://x', '--api-key', API_KEY]),
      ])
      expect(unreachable.status).toBe(1)
      expect(unreachable.stderr).toContain(`Could not reach ${closed}`)
      expect(unreachable.stderr + unreachable.stdout).not.toContain(API_KEY)
      expect(wrongPath.status).toBe(1)
      expect(wrongPath.stderr).toContain(`${apiUrl}/api/nope.json answered 404`)
      expect(wrongKey.stderr).toContain('answered 401')
      expect(noKey.stderr).toContain('--api-url and --api-key (or KILN_API_KEY) go together')
      expect(badUrl.stderr).toContain('--api-url expects an absolute http(s) URL')
      for (const result of [unreachable, wrongPath, wrongKey, noKey, badUrl]) {
        expect(result.status).toBe(1)
        expect(result.stderr.trim().split('\n')).toHaveLength(1)
        expect(result.stderr + result.stdout).not.toContain(API_KEY)
      }
    }, 180_000)
  })
})
