import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import SwaggerParser from '@apidevtools/swagger-parser'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  apiDocs,
  buildOpenApiDocument,
  describeRoute,
  type OpenApiDocument,
} from '../../../src/api/index.ts'
import { toSchema } from '../../../src/api/openapi/json-schema.ts'
import { toOpenApiPath } from '../../../src/api/openapi/route-shape.ts'
import { describeEachDatabase } from '../../support/databases.ts'
import {
  type RunningApi,
  type ScaffoldedApp,
  scaffoldApp,
  startGeneratedApi,
} from '../rest/generated-app.ts'

const run = promisify(execFile)

type Json = Record<string, unknown>

describeEachDatabase(
  'OpenAPI document of the generated API',
  (backend) => {
    let scaffolded: ScaffoldedApp
    let api: RunningApi
    let doc: OpenApiDocument

    beforeAll(async () => {
      scaffolded = await scaffoldApp(backend.dialect)
      api = await startGeneratedApi(scaffolded, backend, {
        title: 'Acme Books',
        extend: (group) => {
          group.post('/posts/:id/publish', (c) => c.json({ ok: true }))
          group.get('/posts/:postId/comments/:commentId', (c) => c.json({ ok: true }))
        },
      })
      // Outside the API prefix: never documented.
      api.app.get('/health', (c) => c.json({ ok: true }))
      const response = await api.app.request('/api/openapi.json')
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toMatch(/application\/json/)
      doc = (await response.json()) as OpenApiDocument
    })
    afterAll(async () => {
      await api?.close()
      scaffolded?.cleanup()
    })

    it('is OpenAPI 3.0 titled from the app name, with no key needed to read it', async () => {
      expect(doc.openapi).toMatch(/^3\.0\./)
      expect(doc.info.title).toBe('Acme Books')
    })

    it('validates with swagger-parser', async () => {
      await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy()
    })

    it('passes redocly lint with no errors', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'kiln-openapi-'))
      const file = join(dir, 'openapi.json')
      writeFileSync(file, JSON.stringify(doc))
      try {
        const result = await run('npx', ['redocly', 'lint', file, '--format', 'json'], {
          maxBuffer: 20 * 1024 * 1024,
        }).catch((error: { stdout?: string; code?: number }) => error)
        const report = JSON.parse(String(result.stdout)) as {
          totals: { errors: number; warnings: number }
          problems: Array<{ severity: string; message: string }>
        }
        expect(report.problems.filter((p) => p.severity === 'error')).toEqual([])
        expect(report.totals.errors).toBe(0)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }, 120_000)

    it('rule 1: only routes under /api/ are included, not the docs routes themselves', () => {
      const paths = Object.keys(doc.paths)
      expect(paths.every((p) => p.startsWith('/api/'))).toBe(true)
      expect(paths).not.toContain('/health')
      expect(paths).not.toContain('/api/openapi.json')
      expect(paths).not.toContain('/api/docs')
      for (const resource of ['users', 'posts']) {
        expect(paths).toContain(`/api/v1/${resource}`)
        expect(paths).toContain(`/api/v1/${resource}/{id}`)
      }
    })

    it('rule 2: automatic summaries', () => {
      expect(doc.paths['/api/v1/posts']?.get?.summary).toBe('List posts')
      expect(doc.paths['/api/v1/posts']?.post?.summary).toBe('Create post')
      expect(doc.paths['/api/v1/posts/{id}']?.get?.summary).toBe('Get post')
      expect(doc.paths['/api/v1/posts/{id}']?.put?.summary).toBe('Update post')
      expect(doc.paths['/api/v1/posts/{id}']?.delete?.summary).toBe('Delete post')
      expect(doc.paths['/api/v1/posts/{id}/publish']?.post?.summary).toBe('Publish post')
    })

    it('rule 3: {param} path parameters, custom routes included', () => {
      const show = doc.paths['/api/v1/posts/{id}']?.get?.parameters
      expect(show?.filter((p) => p.in === 'path')).toEqual([
        { name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } },
      ])
      // Show takes `fields=` as the list does.
      expect(show?.filter((p) => p.in === 'query').map((p) => p.name)).toEqual(['fields'])
      const nested = doc.paths['/api/v1/posts/{postId}/comments/{commentId}']?.get
      expect(nested?.parameters?.map((p) => [p.name, p.in, p.required])).toEqual([
        ['postId', 'path', true],
        ['commentId', 'path', true],
      ])
      const list = doc.paths['/api/v1/posts']?.get?.parameters?.map((p) => `${p.in}:${p.name}`)
      expect(list).toEqual([
        'query:page',
        'query:per_page',
        'query:filter',
        'query:sort',
        'query:fields',
        'query:include',
        'query:search',
        'query:cursor',
        'query:count',
      ])
    })

    it('rule 4: operations tagged by resource name', () => {
      // `keys`: GET /api/v1/keys/self, the calling key's own scopes.
      const expected =
        backend.dialect === 'postgres'
          ? ['comments', 'keys', 'messages', 'posts', 'users']
          : ['keys', 'notes', 'posts', 'users']
      expect(doc.tags.map((t) => t.name)).toEqual(expected)
      for (const [path, item] of Object.entries(doc.paths)) {
        const resource = path.split('/')[3]
        for (const operation of Object.values(item)) expect(operation.tags).toEqual([resource])
      }
    })

    it('rule 5: API-key security scheme in the Authorization header, applied globally', () => {
      expect(doc.components.securitySchemes.apiKey).toMatchObject({
        type: 'apiKey',
        in: 'header',
        name: 'Authorization',
      })
      expect(doc.security).toEqual([{ apiKey: [] }])
    })

    it('request and response schemas come from the zod types; excluded fields are absent', () => {
      const user = doc.components.schemas.User as { properties: Record<string, unknown> }
      expect(Object.keys(user.properties)).toContain('email')
      expect(Object.keys(user.properties)).not.toContain('password_hash')
      expect(Object.keys(user.properties)).not.toContain('remember_token')
      const create = doc.components.schemas.CreatePostRequest as {
        required: string[]
        properties: Record<string, Record<string, unknown>>
        additionalProperties: boolean
      }
      expect([...create.required].sort()).toEqual(['author_id', 'body', 'title'])
      expect(create.properties.title).toMatchObject({
        type: 'string',
        minLength: 1,
        maxLength: 200,
      })
      expect(create.additionalProperties).toBe(false)
      const update = doc.components.schemas.UpdatePostRequest as { required?: string[] }
      expect(update.required ?? []).toEqual([])
      const createUser = doc.components.schemas.CreateUserRequest as {
        properties: Record<string, Record<string, unknown>>
      }
      expect(createUser.properties.email).toMatchObject({ type: 'string', format: 'email' })
      expect(createUser.properties.password).toMatchObject({ minLength: 8 })
      expect(createUser.properties).not.toHaveProperty('password_hash')
      const post = doc.paths['/api/v1/posts']?.post
      const createPost = { $ref: '#/components/schemas/CreatePostRequest' }
      expect(post?.requestBody).toEqual({
        required: true,
        content: {
          'application/json': {
            schema: {
              oneOf: [createPost, { type: 'array', items: createPost, minItems: 1, maxItems: 100 }],
            },
          },
        },
      })
      expect(Object.keys(post?.responses ?? {})).toEqual(
        expect.arrayContaining(['201', '400', '401', '409', '415', '422']),
      )
    })

    it('bulk writes: an array on POST, PATCH and DELETE on the collection, Idempotency-Key', () => {
      const collection = doc.paths['/api/v1/posts']!
      expect(collection.post?.parameters).toEqual([
        expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false }),
      ])
      const created = (collection.post!.responses['201'] as Json).content as Json
      expect(JSON.stringify(created)).toContain('"type":"array"')
      const patch = collection.patch!
      expect(patch).toMatchObject({ operationId: 'updatePosts', 'x-scopes': ['posts:write'] })
      const items = (
        (patch.requestBody as Json).content as Record<string, { schema: { items: Json } }>
      )['application/json']!.schema.items as {
        required: string[]
        properties: Record<string, unknown>
      }
      expect(items.required).toEqual(['id'])
      expect(items.properties.id).toEqual({ type: 'integer', minimum: 1 })
      expect(items.properties).toHaveProperty('title')
      expect(Object.keys(patch.responses)).toEqual(
        expect.arrayContaining(['200', '400', '403', '404', '422']),
      )
      const remove = collection.delete!
      expect(remove).toMatchObject({ operationId: 'deletePosts', 'x-scopes': ['posts:write'] })
      expect(remove.parameters).toEqual([
        expect.objectContaining({ name: 'ids', in: 'query', required: true, explode: false }),
      ])
      expect(Object.keys(remove.responses)).toEqual(
        expect.arrayContaining(['200', '403', '404', '409', '422']),
      )
    })

    it('rule 6: built once, on the first request, then reused', async () => {
      const again = await api.app.request('/api/openapi.json')
      expect(await again.json()).toEqual(doc)
    })
  },
  { only: ['sqlite', 'postgres'] },
)

describe('buildOpenApiDocument', () => {
  it('turns :param segments (with patterns) into {param}', () => {
    expect(toOpenApiPath('/api/v1/posts/:id')).toBe('/api/v1/posts/{id}')
    expect(toOpenApiPath('/api/v1/posts/:id{[0-9]+}/x')).toBe('/api/v1/posts/{id}/x')
  })

  it('skips middleware (ALL), wildcard routes and other prefixes; keeps the first duplicate', () => {
    const doc = buildOpenApiDocument(
      [
        { method: 'ALL', path: '/api/v1/*' },
        { method: 'GET', path: '/api/v1/things' },
        { method: 'GET', path: '/api/v1/things' },
        { method: 'GET', path: '/other/things' },
        { method: 'GET', path: '/api/v1/files/*' },
      ],
      { title: 'T', resources: [{ name: 'things', model: 'Thing', schema: z.object({}) }] },
    )
    expect(Object.keys(doc.paths)).toEqual(['/api/v1/things'])
    expect(doc.paths['/api/v1/things']?.get?.summary).toBe('List things')
    expect(doc.tags).toEqual([{ name: 'things', description: 'Operations on things.' }])
  })

  it('honours another prefix and resources without create/update schemas', () => {
    const doc = buildOpenApiDocument(
      [
        { method: 'GET', path: '/v2/blog_posts/:id' },
        { method: 'DELETE', path: '/v2/blog_posts/:id' },
      ],
      {
        title: 'T',
        apiPrefix: '/v2/',
        resources: [{ name: 'blog_posts', model: 'BlogPost', schema: z.object({ id: z.int() }) }],
      },
    )
    expect(doc.paths['/v2/blog_posts/{id}']?.get?.summary).toBe('Get blog post')
    expect(doc.paths['/v2/blog_posts/{id}']?.delete?.operationId).toBe('deleteBlogPost')
    expect(doc.components.schemas.BlogPost).toMatchObject({ type: 'object' })
  })

  it('a custom single-segment GET is not documented as a paginated list', () => {
    const doc = buildOpenApiDocument(
      [
        { method: 'GET', path: '/api/v2/ping' },
        { method: 'GET', path: '/api/v1/posts' },
        { method: 'GET', path: '/api/v1/stats/:day' },
      ],
      { title: 'T', resources: [{ name: 'posts', model: 'Post', schema: z.object({}) }] },
    )
    const ping = doc.paths['/api/v2/ping']?.get
    expect(ping?.summary).toBe('Get ping')
    expect(ping?.parameters).toBeUndefined()
    expect(JSON.stringify(ping)).not.toMatch(/per_page|PageMeta|PageLinks/)
    expect(ping?.responses['200']).toEqual({
      description: 'Success.',
      content: { 'application/json': { schema: { type: 'object' } } },
    })
    expect(doc.paths['/api/v1/stats/{day}']?.get?.operationId).not.toMatch(/^show/)
    // A declared resource keeps its list.
    expect(doc.paths['/api/v1/posts']?.get?.parameters?.map((p) => p.name)).toEqual([
      'page',
      'per_page',
    ])
  })

  it('describeRoute lets a custom route declare its own schema, through a mounted group', async () => {
    const Pong = z.object({ pong: z.boolean(), at: z.string() })
    const group = new Hono()
      .get(
        '/ping',
        describeRoute({
          summary: 'Health check',
          description: 'Answers when the API is up.',
          tags: ['health'],
          operationId: 'ping',
          query: z.object({ verbose: z.enum(['yes', 'no']).optional(), region: z.string() }),
          responses: { 200: { description: 'Pong.', schema: Pong } },
        }),
        (c) => c.json({ pong: true, at: new Date().toISOString() }),
      )
      .post('/echo/:id', describeRoute({ body: z.object({ text: z.string() }) }), async (c) =>
        c.json(await c.req.json()),
      )
      .get('/internal', describeRoute({ hidden: true }), (c) => c.text('ok'))
    const app = new Hono().route('/api/v2', group)
    const doc = buildOpenApiDocument(app.routes, { title: 'T' })
    expect(Object.keys(doc.paths).sort()).toEqual(['/api/v2/echo/{id}', '/api/v2/ping'])
    const ping = doc.paths['/api/v2/ping']?.get
    expect(ping).toMatchObject({
      summary: 'Health check',
      description: 'Answers when the API is up.',
      tags: ['health'],
      operationId: 'ping',
    })
    expect(ping?.parameters).toEqual([
      {
        name: 'verbose',
        in: 'query',
        required: false,
        schema: { type: 'string', enum: ['yes', 'no'] },
      },
      { name: 'region', in: 'query', required: true, schema: { type: 'string' } },
    ])
    expect(ping?.responses['200']).toEqual({
      description: 'Pong.',
      content: { 'application/json': { schema: toSchema(Pong, 'output') } },
    })
    expect(ping?.responses['401']).toEqual({ $ref: '#/components/responses/401' })
    const echo = doc.paths['/api/v2/echo/{id}']?.post
    expect(echo?.parameters?.map((p) => p.name)).toEqual(['id'])
    expect(echo?.requestBody).toEqual({
      required: true,
      content: {
        'application/json': { schema: toSchema(z.object({ text: z.string() }), 'input') },
      },
    })
    expect(doc.tags.map((t) => t.name)).toEqual(['echo', 'health'])
    // The middleware documents only: the route still answers.
    const response = await app.request('/api/v2/ping')
    expect(((await response.json()) as { pong: boolean }).pong).toBe(true)
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy()
  })

  it('apiDocs needs the app and a title', () => {
    expect(() => apiDocs({ app: undefined as never, title: 'x' })).toThrow(TypeError)
    expect(() => apiDocs({ app: new Hono(), title: '' })).toThrow(TypeError)
  })
})

describe('apiDocs caching (rule 6)', () => {
  it('reads the routes once, on the first request of the document, then reuses it', async () => {
    const app = new Hono()
    app.get('/api/v1/things', (c) => c.json([]))
    let reads = 0
    const watched = {
      get routes() {
        reads++
        return app.routes
      },
    }
    app.route('/', apiDocs({ app: watched, title: 'T' }))
    reads = 0 // the factory checks its options once
    const first = await (await app.request('/api/openapi.json')).text()
    const second = await (await app.request('/api/openapi.json')).text()
    await app.request('/api/docs')
    expect(second).toBe(first)
    expect(reads).toBe(1)
  })
})

describe('ReDoc page', () => {
  const app = new Hono()
  app.get('/api/v1/things', (c) => c.json([]))
  app.route('/', apiDocs({ app, title: 'Docs <Test>' }))

  it('serves HTML that loads the script from this app only, with a strict CSP', async () => {
    const response = await app.request('/api/docs')
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/text\/html/)
    const html = await response.text()
    expect(html).toContain('<title>Docs &lt;Test&gt; API</title>')
    expect(html).toContain('spec-url="/api/openapi.json"')
    expect(html).toContain('<script src="/api/docs/redoc.standalone.js"></script>')
    expect(html).not.toMatch(/https?:\/\//)
    const csp = response.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("img-src 'self' data:")
  })

  it('serves the ReDoc bundle from the installed package', async () => {
    const response = await app.request('/api/docs/redoc.standalone.js')
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/javascript/)
    const body = await response.text()
    expect(body.length).toBeGreaterThan(500_000)
    expect(body).toContain('Redoc')
  })
})
