import { join } from 'node:path'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { getTableName } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApiKey, type ListQueryDefinition } from '../../src/api/index.ts'
import { silentLogger } from '../../src/core/index.ts'
import { createModelRegistry, isCredentialField, resourceName } from '../../src/db/index.ts'
import {
  createDataTools,
  createMcpServer,
  type McpAccessOptions,
  type McpCaller,
} from '../../src/mcp/index.ts'
import { call, connectInMemory } from '../mcp/support/client.ts'
import { describeEachDatabase } from '../support/databases.ts'
import {
  type RunningApi,
  type ScaffoldedApp,
  scaffoldApp,
  startGeneratedApi,
} from './rest/generated-app.ts'

/** Every object key anywhere in a JSON value. */
function keysIn(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) keysIn(item, into)
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      into.add(key)
      keysIn(inner, into)
    }
  }
  return into
}

/** The keys no answer may ever hold: every credential-looking one (`token_count` is not). */
function credentialKeys(value: unknown): string[] {
  return [...keysIn(value)].filter((key) => isCredentialField(key))
}

const KEYS: Record<string, string[]> = {
  postsRead: ['posts:read'],
  postsWrite: ['posts:read', 'posts:write'],
  usersRead: ['users:read'],
  postsAndUsers: ['posts:read', 'users:read'],
  everything: ['*'],
}

const allows = (scopes: string[], scope: string) => scopes.includes('*') || scopes.includes(scope)

describeEachDatabase('who can see what: every surface under one policy', (backend) => {
  let scaffolded: ScaffoldedApp
  let api: RunningApi
  let resources: Array<{ name: string; query: ListQueryDefinition }>
  let generated: {
    apiResources: Array<{ name: string; model: string; query: ListQueryDefinition }>
  }
  const auth: Record<string, string> = {}
  let authorId: number
  let postId: number

  beforeAll(async () => {
    scaffolded = await scaffoldApp(backend.dialect)
    api = await startGeneratedApi(scaffolded, backend)
    generated = await import(join(scaffolded.outDir, 'routes.ts'))
    resources = generated.apiResources
    for (const [name, scopes] of Object.entries(KEYS)) {
      const { rawKey } = await createApiKey(api.database, { name, scopes })
      auth[name] = `Bearer ${rawKey}`
    }
    authorId = await api.createUser()
    const created = await api.request('POST', '/api/v1/posts', {
      title: 'Hello',
      body: 'World',
      author_id: authorId,
    })
    postId = ((await created.json()) as { data: { id: number } }).data.id
  })
  afterAll(async () => {
    await api?.close()
    scaffolded?.cleanup()
  })

  const as = (key: string) => ({ authorization: auth[key]! })

  it('reproduction: a posts:read key gets 403 for include=author, as for GET /users', async () => {
    const direct = await api.request('GET', '/api/v1/users', undefined, as('postsRead'))
    const included = await api.request(
      'GET',
      '/api/v1/posts?include=author',
      undefined,
      as('postsRead'),
    )
    expect(direct.status).toBe(403)
    expect(included.status).toBe(403)
    const body = await included.json()
    expect(body).toEqual({ error: 'This API key lacks the scope users:read' })
    expect(body).toEqual(await direct.json())
    // The reverse relation needs the other resource's scope as well.
    const reverse = await api.request(
      'GET',
      '/api/v1/users?include=posts',
      undefined,
      as('usersRead'),
    )
    expect(reverse.status).toBe(403)
    expect(await reverse.json()).toEqual({ error: 'This API key lacks the scope posts:read' })
  })

  it('reproduction: with both scopes, include=author shows what GET /users shows and no credential', async () => {
    const page = await api.request(
      'GET',
      '/api/v1/posts?include=author',
      undefined,
      as('postsAndUsers'),
    )
    expect(page.status).toBe(200)
    const { data } = (await page.json()) as { data: Array<{ author: Record<string, unknown> }> }
    const user = await api.request('GET', `/api/v1/users/${authorId}`, undefined, as('usersRead'))
    const shown = Object.keys(((await user.json()) as { data: object }).data).sort()
    expect(Object.keys(data[0]!.author).sort()).toEqual(shown)
    expect(credentialKeys(data)).toEqual([])
  })

  it('REST: list, show, include, create, update and delete follow each key’s scopes', async () => {
    for (const [keyName, scopes] of Object.entries(KEYS)) {
      for (const { name, query } of resources) {
        const read = allows(scopes, `${name}:read`)
        const list = await api.request('GET', `/api/v1/${name}`, undefined, as(keyName))
        expect(list.status, `${keyName} GET /${name}`).toBe(read ? 200 : 403)
        const listed = await list.json()
        expect(credentialKeys(listed), `${keyName} GET /${name}`).toEqual([])
        const first = read ? (listed as { data: Array<{ id: number }> }).data[0] : undefined
        if (first) {
          const show = await api.request(
            'GET',
            `/api/v1/${name}/${first.id}`,
            undefined,
            as(keyName),
          )
          expect(show.status).toBe(200)
          expect(credentialKeys(await show.json())).toEqual([])
        }
        for (const [relation, spec] of query.relations) {
          const related = resourceName(getTableName(spec.table))
          const allowed = read && allows(scopes, `${related}:read`)
          const page = await api.request(
            'GET',
            `/api/v1/${name}?include=${relation}`,
            undefined,
            as(keyName),
          )
          expect(page.status, `${keyName} GET /${name}?include=${relation}`).toBe(
            allowed ? 200 : 403,
          )
          const body = await page.json()
          if (read && !allowed)
            expect(body).toEqual({ error: `This API key lacks the scope ${related}:read` })
          expect(credentialKeys(body)).toEqual([])
        }
        // Writes: a key without the write scope changes nothing (403 before the body is read).
        if (!allows(scopes, `${name}:write`)) {
          for (const [method, path] of [
            ['POST', `/api/v1/${name}`],
            ['PATCH', `/api/v1/${name}/1`],
            ['DELETE', `/api/v1/${name}/1`],
          ] as const) {
            const response = await api.request(method, path, {}, as(keyName))
            expect(response.status, `${keyName} ${method} ${path}`).toBe(403)
            expect(await response.json()).toEqual({
              error: `This API key lacks the scope ${name}:write`,
            })
          }
        }
      }
    }
    // The key that may write posts does, and its answers hold no credential.
    const created = await api.request(
      'POST',
      '/api/v1/posts',
      { title: 'Mine', body: 'Text', author_id: authorId },
      as('postsWrite'),
    )
    expect(created.status).toBe(201)
    const { id } = ((await created.json()) as { data: { id: number } }).data
    const updated = await api.request(
      'PATCH',
      `/api/v1/posts/${id}`,
      { title: 'Edited' },
      as('postsWrite'),
    )
    expect(updated.status).toBe(200)
    expect(credentialKeys(await updated.json())).toEqual([])
    const deleted = await api.request('DELETE', `/api/v1/posts/${id}`, undefined, as('postsWrite'))
    expect(deleted.status).toBe(200)
  })

  it('the OpenAPI document says what each include needs, and shows no credential', async () => {
    const response = await api.request('GET', '/api/openapi.json')
    const document = (await response.json()) as {
      paths: Record<string, { get?: { parameters?: Array<{ name: string; description: string }> } }>
      components: { schemas: Record<string, unknown> }
    }
    const include = document.paths['/api/v1/posts']!.get!.parameters!.find(
      (parameter) => parameter.name === 'include',
    )
    expect(include?.description).toMatch(/author needs users:read/)
    const records = generated.apiResources.map(({ model }) => document.components.schemas[model])
    expect(records.every((schema) => schema !== undefined)).toBe(true)
    // Records only: a create request takes a `password` to hash, as input.
    expect(credentialKeys(records)).toEqual([])
  })

  describe('MCP data tools, in process', () => {
    const clients: Client[] = []
    afterAll(async () => {
      for (const client of clients) await client.close()
    })
    async function connect(access: McpAccessOptions | undefined, caller: McpCaller) {
      const schema = await import(join(scaffolded.root, 'src/schema.ts'))
      const models = createModelRegistry(schema, api.database.dialect)
      const tools = createDataTools({
        database: api.database,
        models,
        access,
        logger: silentLogger(),
      })
      const client = await connectInMemory(createMcpServer({ dataTools: { tools, caller } }))
      clients.push(client)
      return client
    }
    const reader: McpCaller = { userId: '1', scopes: ['mcp:read'] }
    const writer: McpCaller = { userId: '1', scopes: ['mcp:read', 'mcp:write'] }

    it('reproduction: with no policy an assistant reaches no model', async () => {
      const client = await connect(undefined, writer)
      const { tools } = await client.listTools()
      expect(tools).toEqual([])
      await expect(
        client.callTool({ name: 'crud_list', arguments: { model: 'users' } }),
      ).rejects.toThrow(/crud_list/)
    })

    it('crud_* follow the policy and the token’s scopes: models, tools, fields and includes', async () => {
      const access: McpAccessOptions = {
        models: { posts: { tools: ['crud_list', 'crud_create', 'crud_update'] } },
      }
      for (const caller of [reader, writer]) {
        const client = await connect(access, caller)
        const users = await call(client, 'crud_list', { model: 'users' })
        expect(users).toMatchObject({
          isError: true,
          text: 'Unknown model "users". Valid models: posts',
        })
        // users is not granted: include=author is no relation of posts here.
        const author = await call(client, 'crud_list', { model: 'posts', include: ['author'] })
        expect(author.isError).toBe(true)
        expect(author.text).toMatch(/"author" is not a relation/)
        const posts = await call(client, 'crud_list', { model: 'posts' })
        expect(posts.isError).toBe(false)
        expect(credentialKeys(posts.json)).toEqual([])
        const create = await call(client, 'crud_create', {
          model: 'posts',
          data: { title: 'T', body: 'B', author_id: authorId },
        })
        const update = await call(client, 'crud_update', {
          model: 'posts',
          id: postId,
          data: { title: 'Changed' },
        })
        if (caller === reader) {
          expect(create).toMatchObject({
            isError: true,
            text: 'crud_create needs the mcp:write scope',
          })
          expect(update).toMatchObject({
            isError: true,
            text: 'crud_update needs the mcp:write scope',
          })
        } else {
          expect(create.isError).toBe(false)
          expect(update.isError).toBe(false)
          expect(credentialKeys([create.json, update.json])).toEqual([])
        }
        const tools = (await client.listTools()).tools.map((tool) => tool.name)
        expect(tools).not.toContain('crud_delete')
      }
    })

    it('include reads the related model under its own policy: granted fields only', async () => {
      const client = await connect(
        {
          models: {
            posts: { tools: ['crud_list'] },
            users: { tools: ['crud_list'], read: ['id', 'name'] },
          },
        },
        reader,
      )
      const page = await call(client, 'crud_list', { model: 'posts', include: ['author'] })
      expect(page.isError).toBe(false)
      const records = (page.json as { records: Array<{ author: object }> }).records
      expect(records.length).toBeGreaterThan(0)
      for (const record of records)
        expect(Object.keys(record.author).sort()).toEqual(['id', 'name'])
      // A credential is never readable, even when a policy names it.
      await expect(
        connect({ models: { users: { read: ['id', 'password_hash'] } } }, reader),
      ).rejects.toThrow(/users\.password_hash in read: a credential field is never readable/)
    })
  })
})
