import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import type { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { demoAccessToken } from '../support/demo-oauth.ts'
import { type ServedDemo, serveDemo } from '../support/demo-server.ts'

const EMAIL = 'demo@example.com'
const PASSWORD = 'correct horse battery'

interface Schema {
  $id: string
  properties: Record<string, Record<string, unknown>>
  required: string[]
  'x-kiln': Record<string, unknown>
}

/**
 * The demo's model resources and completions over HTTP with an OAuth token from the real flow
 * (registration, login, consent, token), for a 2026-07-28 client and a 2025 client of the v2
 * SDK.
 */
describe('the demo /mcp: model resources and completions', () => {
  let app: Hono
  let demo: ServedDemo | undefined
  let origin: string
  let token: string

  beforeAll(async () => {
    demo = await serveDemo({
      MCP_TOKEN_SECRET: 'demo-mcp-resources-secret-0123456789-abc',
      DEMO_EMAIL: EMAIL,
      DEMO_PASSWORD: PASSWORD,
    })
    ;({ origin, app } = demo)
    token = await demoAccessToken(app, origin, EMAIL, PASSWORD)
  }, 120_000)

  afterAll(async () => demo?.close())

  for (const mode of [{ pin: '2026-07-28' }, 'legacy'] as const) {
    const era = mode === 'legacy' ? '2025-11-25' : '2026-07-28'
    it(`lists, reads and completes the models the token reaches [${era}]`, async () => {
      const client = new Client(
        { name: 'kiln-resources', version: '1.0.0' },
        {
          versionNegotiation: { mode },
        },
      )
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      )
      try {
        expect(client.getProtocolEra()).toBe(mode === 'legacy' ? 'legacy' : 'modern')
        expect(client.getServerCapabilities()).toMatchObject({
          resources: { listChanged: false },
          completions: {},
        })

        // The users table is not granted to assistants: no resource, no completion, not found.
        const { resources } = await client.listResources()
        expect(resources).toEqual([
          expect.objectContaining({ uri: 'kiln://models/comments', name: 'comments' }),
          expect.objectContaining({
            uri: 'kiln://models/posts',
            name: 'posts',
            title: 'Post',
            mimeType: 'application/schema+json',
          }),
        ])
        const { resourceTemplates } = await client.listResourceTemplates()
        expect(resourceTemplates.map((template) => template.uriTemplate)).toEqual([
          'kiln://models/{model}',
          'kiln://models/{model}/fields/{field}',
          'kiln://models/{model}/records/{id}',
        ])

        const read = await client.readResource({ uri: 'kiln://models/posts' })
        const content = read.contents[0]!
        expect(content).toMatchObject({
          uri: 'kiln://models/posts',
          mimeType: 'application/schema+json',
        })
        const posts = JSON.parse((content as { text: string }).text) as Schema
        expect(posts.$id).toBe('kiln://models/posts')
        expect(Object.keys(posts.properties)).toEqual(
          expect.arrayContaining(['id', 'title', 'body', 'published', 'author_id', 'comments']),
        )
        expect(posts.properties.title).toMatchObject({
          type: 'string',
          'x-kiln': { filterable: true },
        })
        expect(posts.properties.published).toMatchObject({ type: 'boolean' })
        expect(posts.properties.id).toMatchObject({ type: 'integer', readOnly: true })
        expect(posts.properties.created_at).toMatchObject({ format: 'date-time', readOnly: true })
        expect(posts.properties.title!.readOnly).toBeUndefined()
        // comments → posts is a has-many include; users (author) is out of reach, so no relation.
        expect(posts.properties.comments).toMatchObject({
          type: 'array',
          items: { $ref: 'kiln://models/comments' },
        })
        expect(posts.properties).not.toHaveProperty('author')
        expect(posts['x-kiln']).toMatchObject({
          resource: 'posts',
          tools: ['crud_create', 'crud_list', 'crud_update', 'crud_delete'],
          // The fields of the REST update request (requests.posts.update).
          updatable: ['title', 'body', 'published', 'token_count', 'author_id'],
          relations: {
            comments: { kind: 'has-many', model: 'comments', local: 'id', remote: 'post_id' },
          },
        })
        const comments = JSON.parse(
          (
            (await client.readResource({ uri: 'kiln://models/comments' })).contents[0] as {
              text: string
            }
          ).text,
        ) as Schema
        expect(comments.properties.post).toMatchObject({
          anyOf: [{ $ref: 'kiln://models/posts' }, { type: 'null' }],
        })
        expect(comments['x-kiln']).toMatchObject({
          tools: ['crud_create', 'crud_list'],
          updatable: [],
        })

        const field = await client.readResource({ uri: 'kiln://models/posts/fields/title' })
        expect(JSON.parse((field.contents[0] as { text: string }).text)).toMatchObject({
          $id: 'kiln://models/posts/fields/title',
          type: 'string',
          'x-kiln': { filterable: true, sortable: true },
        })

        for (const uri of [
          'kiln://models/users',
          'kiln://models/users/fields/email',
          'kiln://models/posts/fields/password_hash',
          'kiln://models/invoices',
        ]) {
          const error = await client.readResource({ uri }).catch((caught: unknown) => caught)
          expect(error).toBeInstanceOf(ProtocolError)
          expect(error).toMatchObject({ code: -32602, data: { uri } })
        }

        const complete = (
          uri: string,
          name: string,
          value: string,
          args?: Record<string, string>,
        ) =>
          client
            .complete({
              ref: { type: 'ref/resource', uri },
              argument: { name, value },
              ...(args ? { context: { arguments: args } } : {}),
            })
            .then((result) => result.completion.values)
        expect(await complete('kiln://models/{model}', 'model', '')).toEqual(['comments', 'posts'])
        expect(await complete('kiln://models/{model}', 'model', 'p')).toEqual(['posts'])
        expect(await complete('kiln://models/{model}', 'model', 'us')).toEqual([])
        const fields = 'kiln://models/{model}/fields/{field}'
        expect(await complete(fields, 'field', 'pu', { model: 'posts' })).toEqual(['published'])
        expect(await complete(fields, 'field', '', { model: 'comments' })).toEqual(
          expect.arrayContaining(['post_id', 'author_name', 'body']),
        )
        expect(await complete(fields, 'field', 'e', { model: 'users' })).toEqual([])
        expect(await complete(fields, 'field', 'pass', { model: 'users' })).toEqual([])
      } finally {
        await client.close()
      }
    }, 60_000)
  }
})
