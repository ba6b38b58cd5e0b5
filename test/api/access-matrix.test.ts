import { readFileSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { serve } from '@hono/node-server'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { getTableName } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApiKey, type ListQueryDefinition } from '../../src/api/index.ts'
import { silentLogger } from '../../src/core/index.ts'
import { createModelRegistry, isCredentialField } from '../../src/db/index.ts'
import { resourceName } from '../../src/db/models/inflect.ts'
import {
  createOpenApiBridgeServer,
  fetchKeyScopes,
  type OpenApiBridgeOptions,
  operationsFromDocument,
} from '../../src/mcp/bridge/openapi-bridge.ts'
import {
  createDataTools,
  createMcpServer,
  type McpAccessOptions,
  type McpCaller,
  type McpQueries,
} from '../../src/mcp/index.ts'
import { call, connectInMemory } from '../mcp/support/client.ts'
import { describeEachDatabase } from '../support/databases.ts'
import { repoRoot } from '../support/processes.ts'
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
  drafts: ['posts:read', 'posts:write', 'posts:drafts', 'users:read'],
  everything: ['*'],
}

/**
 * The posts' row filter, added to the generated controller's list query as an app would: keys
 * read published posts unless they hold posts:drafts; an assistant acting for a user also
 * reaches that user's own drafts.
 */
const POSTS_ROWS = `(caller) =>
    caller?.scopes.includes('*') || caller?.scopes.includes('posts:drafts')
      ? undefined
      : caller?.userId
        ? {
            where: or(eq(posts.published, true), eq(posts.authorId, Number(caller.userId)))!,
            key: \`published-or:\${caller.userId}\`,
          }
        : { where: eq(posts.published, true), key: 'published' }`

function addRowFilter(outDir: string): void {
  const path = join(outDir, 'controllers/posts.ts')
  const source = readFileSync(path, 'utf8')
  const patched = source
    .replace(
      "import { Hono } from 'hono'",
      "import { eq, or } from 'drizzle-orm'\nimport { Hono } from 'hono'",
    )
    .replace('  resource: toPostResource,', `  rows: ${POSTS_ROWS},\n  resource: toPostResource,`)
  if (patched === source || !patched.includes('rows:')) throw new Error('posts controller changed')
  writeFileSync(path, patched)
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
  const rawKeys: Record<string, string> = {}
  let authorId: number
  /** A draft (published false): only posts:drafts keys and its author reach it. */
  let postId: number
  let publishedId: number

  beforeAll(async () => {
    scaffolded = await scaffoldApp(backend.dialect)
    addRowFilter(scaffolded.outDir)
    api = await startGeneratedApi(scaffolded, backend)
    generated = await import(join(scaffolded.outDir, 'routes.ts'))
    resources = generated.apiResources
    for (const [name, scopes] of Object.entries(KEYS)) {
      const { rawKey } = await createApiKey(api.database, { name, scopes })
      auth[name] = `Bearer ${rawKey}`
      rawKeys[name] = rawKey
    }
    authorId = await api.createUser()
    const published = await api.request('POST', '/api/v1/posts', {
      title: 'Out',
      body: 'There',
      published: true,
      author_id: authorId,
    })
    publishedId = ((await published.json()) as { data: { id: number } }).data.id
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
    expect(body).toEqual({ error: 'This API key lacks the scope users:read', code: 'forbidden' })
    expect(body).toEqual(await direct.json())
    // The reverse relation needs the other resource's scope as well.
    const reverse = await api.request(
      'GET',
      '/api/v1/users?include=posts',
      undefined,
      as('usersRead'),
    )
    expect(reverse.status).toBe(403)
    expect(await reverse.json()).toEqual({
      error: 'This API key lacks the scope posts:read',
      code: 'forbidden',
    })
  })

  it('reproduction: a key that reads one resource includes none other (comments:read and include=post)', async () => {
    const relations = resources.flatMap(({ name, query }) =>
      [...query.relations].map(([relation, spec]) => ({
        name,
        relation,
        related: resourceName(getTableName(spec.table)),
      })),
    )
    // The demo's comments belong to posts; the SQLite fixture's posts to users.
    expect(relations.map(({ name, relation }) => `${name}.${relation}`)).toContain(
      backend.dialect === 'postgres' ? 'comments.post' : 'posts.author',
    )
    for (const { name, relation, related } of relations) {
      if (related === name) continue
      const { rawKey } = await createApiKey(api.database, {
        name: `${name}-only`,
        scopes: [`${name}:read`],
      })
      const headers = { authorization: `Bearer ${rawKey}` }
      const plain = await api.request('GET', `/api/v1/${name}`, undefined, headers)
      expect(plain.status, `${name}:read GET /${name}`).toBe(200)
      const direct = await api.request('GET', `/api/v1/${related}`, undefined, headers)
      const included = await api.request(
        'GET',
        `/api/v1/${name}?include=${relation}`,
        undefined,
        headers,
      )
      expect(included.status, `${name}:read GET /${name}?include=${relation}`).toBe(403)
      const body = await included.json()
      expect(body).toEqual({
        error: `This API key lacks the scope ${related}:read`,
        code: 'forbidden',
      })
      expect(direct.status).toBe(403)
      expect(body).toEqual(await direct.json())
    }
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
            expect(body).toEqual({
              error: `This API key lacks the scope ${related}:read`,
              code: 'forbidden',
            })
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
              code: 'forbidden',
            })
          }
        }
      }
    }
    // The key that may write posts does, and its answers hold no credential.
    const created = await api.request(
      'POST',
      '/api/v1/posts',
      { title: 'Mine', body: 'Text', published: true, author_id: authorId },
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

  it('REST: the row filter keeps list, show, include, update and delete to the caller’s rows', async () => {
    const ids = async (key: string, path = '/api/v1/posts') => {
      const response = await api.request('GET', path, undefined, as(key))
      expect(response.status, `${key} GET ${path}`).toBe(200)
      const body = (await response.json()) as {
        data: Array<{ id: number; posts?: Array<{ id: number; published: boolean }> }>
        meta: { total: number }
      }
      return body
    }
    const reader = await ids('postsWrite')
    expect(reader.data.map((post) => post.id)).toContain(publishedId)
    expect(reader.data.map((post) => post.id)).not.toContain(postId)
    // The count keeps to the same rows (its cache is keyed by the filter).
    expect(reader.meta.total).toBe(reader.data.length)
    const drafts = await ids('drafts')
    expect(drafts.data.map((post) => post.id)).toContain(postId)
    expect(drafts.meta.total).toBeGreaterThan(reader.meta.total)
    // show: a row the caller cannot list is a 404, as an unknown id.
    const hidden = await api.request('GET', `/api/v1/posts/${postId}`, undefined, as('postsRead'))
    expect(hidden.status).toBe(404)
    const visible = await api.request(
      'GET',
      `/api/v1/posts/${publishedId}`,
      undefined,
      as('postsRead'),
    )
    expect(visible.status).toBe(200)
    // update and delete: 404, and nothing changes.
    const patch = await api.request(
      'PATCH',
      `/api/v1/posts/${postId}`,
      { title: 'X' },
      as('postsWrite'),
    )
    expect(patch.status).toBe(404)
    const remove = await api.request(
      'DELETE',
      `/api/v1/posts/${postId}`,
      undefined,
      as('postsWrite'),
    )
    expect(remove.status).toBe(404)
    // The bulk routes name records by id too: one the caller cannot reach is a 404, all or none.
    const bulkPatch = await api.request(
      'PATCH',
      '/api/v1/posts',
      [
        { id: publishedId, title: 'Y' },
        { id: postId, title: 'X' },
      ],
      as('postsWrite'),
    )
    expect(bulkPatch.status).toBe(404)
    const bulkRemove = await api.request(
      'DELETE',
      `/api/v1/posts?ids=${publishedId},${postId}`,
      undefined,
      as('postsWrite'),
    )
    expect(bulkRemove.status).toBe(404)
    // Aggregates count the caller's rows, as the list's total does.
    const counted = async (key: string) => {
      const response = await api.request(
        'GET',
        '/api/v1/posts/aggregate?count=*',
        undefined,
        as(key),
      )
      expect(response.status, key).toBe(200)
      return ((await response.json()) as { data: Array<{ count: number }> }).data[0]?.count
    }
    expect(await counted('postsWrite')).toBe(reader.meta.total)
    expect(await counted('drafts')).toBe(drafts.meta.total)
    const published = await api.request(
      'GET',
      `/api/v1/posts/${publishedId}`,
      undefined,
      as('drafts'),
    )
    expect(((await published.json()) as { data: { title: string } }).data.title).toBe('Out')
    const still = await api.request('GET', `/api/v1/posts/${postId}`, undefined, as('drafts'))
    expect(still.status).toBe(200)
    expect(((await still.json()) as { data: { title: string } }).data.title).toBe('Hello')
    // include= of posts from users keeps to the same rows.
    const users = await ids('postsAndUsers', '/api/v1/users?include=posts')
    const included = users.data.flatMap((user) => user.posts ?? [])
    expect(included.map((post) => post.id)).toContain(publishedId)
    expect(included.every((post) => post.published)).toBe(true)
    const withDrafts = await ids('drafts', '/api/v1/users?include=posts')
    expect(withDrafts.data.flatMap((user) => user.posts ?? []).map((post) => post.id)).toContain(
      postId,
    )
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

  describe('the OpenAPI→MCP bridge', () => {
    type Document = {
      paths: Record<
        string,
        Record<string, { 'x-scopes'?: string[]; responses?: Record<string, { content?: object }> }>
      >
    }
    const documentOf = async () =>
      (await (await api.request('GET', '/api/openapi.json')).json()) as Document
    /** `method path` of each operation a key with `scopes` may call as a tool, from the document. */
    const callable = (document: Document, scopes: string[]) =>
      Object.entries(document.paths).flatMap(([path, item]) =>
        Object.entries(item)
          .filter(([, operation]) => (operation['x-scopes'] ?? []).every((s) => allows(scopes, s)))
          // An event stream is no tool: a call answers once.
          .filter(
            ([, operation]) =>
              !('text/event-stream' in (operation.responses?.['200']?.content ?? {})),
          )
          .map(([method]) => `${method} ${path}`),
      )

    it('lists only the operations each key may call; what it lists answers, include included', async () => {
      const document = await documentOf()
      for (const [keyName, scopes] of Object.entries(KEYS)) {
        const options: OpenApiBridgeOptions = {
          apiUrl: 'http://localhost/',
          apiKey: rawKeys[keyName]!,
          fetch: (url, init) => Promise.resolve(api.app.request(url as URL, init)),
        }
        const learned = await fetchKeyScopes(document as never, options)
        expect(learned, keyName).toEqual(scopes)
        const operations = operationsFromDocument(document as never, { scopes: learned })
        const listed = operations.map((operation) => `${operation.method} ${operation.path}`)
        expect(listed.sort(), keyName).toEqual(callable(document, scopes).sort())
        expect(listed).toContain('get /api/v1/keys/self')
        // Every list it offers answers (no 403), and no answer holds a credential.
        const client = await connectInMemory(
          createOpenApiBridgeServer(operations, options) as never,
        )
        try {
          for (const operation of operations) {
            if (operation.method !== 'get' || operation.path.includes('{')) continue
            const result = await call(client, operation.tool.name, {})
            expect(result.isError, `${keyName} ${operation.tool.name}`).toBe(false)
            expect(credentialKeys(result.json)).toEqual([])
          }
          // include= through the bridge is read under the related resource's scope too.
          if (listed.includes('get /api/v1/posts')) {
            const included = await call(client, 'get_posts', { include: 'author' })
            expect(included.isError, keyName).toBe(!allows(scopes, 'users:read'))
            if (included.isError) expect(included.text).toContain('lacks the scope users:read')
            expect(credentialKeys(included.json)).toEqual([])
          }
        } finally {
          await client.close()
        }
      }
    })

    it('kilnjs mcp --api-url --api-key: a posts:read key sees the posts reads only', async () => {
      const server = serve({ fetch: api.app.fetch, port: 0, hostname: '127.0.0.1' })
      await new Promise<void>((resolve) => server.once('listening', () => resolve()))
      const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [join(repoRoot, 'bin/kiln.js'), 'mcp', '--api-url', apiUrl],
        cwd: repoRoot,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? repoRoot,
          KILN_API_KEY: rawKeys.postsRead!,
        },
        stderr: 'pipe',
      })
      const client = new Client({ name: 'matrix-bridge', version: '1.0.0' })
      try {
        await client.connect(transport)
        const { tools } = await client.listTools()
        expect(tools.map((tool) => tool.name).sort()).toEqual([
          'get_keys_self',
          'get_posts',
          'get_posts_aggregate',
          'get_posts_by_id',
        ])
        const page = await call(client, 'get_posts', {})
        expect(page.isError).toBe(false)
        const refused = await call(client, 'get_posts', { include: 'author' })
        expect(refused.isError).toBe(true)
        expect(refused.text).toContain('403')
      } finally {
        await client.close()
        await new Promise<void>((resolve) => {
          ;(server as { closeAllConnections?: () => void }).closeAllConnections?.()
          server.close(() => resolve())
        })
      }
    }, 60_000)
  })

  describe('MCP data tools, in process', () => {
    const clients: Client[] = []
    afterAll(async () => {
      for (const client of clients) await client.close()
    })
    async function connect(
      access: McpAccessOptions | undefined,
      caller: McpCaller,
      queries?: McpQueries,
    ) {
      const schema = await import(join(scaffolded.root, 'src/schema.ts'))
      const models = createModelRegistry(schema, api.database.dialect)
      const tools = createDataTools({
        database: api.database,
        models,
        access,
        queries,
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

    it('with the list queries, crud_* read and write under REST’s rules: fields, includes, rows', async () => {
      const queries = Object.fromEntries(resources.map(({ name, query }) => [name, query]))
      const access: McpAccessOptions = {
        // The rows a call reaches; approval (which asks before the row is looked up, and so
        // tells nothing of it) is tested in test/mcp/approvals/.
        approval: [],
        models: {
          posts: { tools: ['crud_list', 'crud_update', 'crud_delete'] },
          users: { tools: ['crud_list'] },
        },
      }
      const stranger = await connect(access, { ...writer, userId: '0' }, queries)
      const list = await call(stranger, 'crud_list', { model: 'posts', include: ['author'] })
      expect(list.isError).toBe(false)
      const records = (list.json as { records: Array<Record<string, unknown>>; total: number })
        .records
      const listed = records.map((record) => record.id)
      expect(listed).toContain(publishedId)
      expect(listed).not.toContain(postId)
      // The records' fields are the REST list's fields; the author's are GET /users' fields.
      const postsFields = queries.posts!.fields.map((field) => field.name).sort()
      const usersFields = queries.users!.fields.map((field) => field.name).sort()
      for (const record of records) {
        expect(
          Object.keys(record)
            .filter((key) => key !== 'author')
            .sort(),
        ).toEqual(postsFields)
        expect(Object.keys(record.author as object).sort()).toEqual(usersFields)
      }
      expect(credentialKeys(records)).toEqual([])
      // A draft is no record to this caller: update and delete find nothing, and change nothing.
      const update = await call(stranger, 'crud_update', {
        model: 'posts',
        id: postId,
        data: { title: 'Taken' },
      })
      expect(update).toMatchObject({ isError: true, text: `No posts record with id ${postId}` })
      const remove = await call(stranger, 'crud_delete', { model: 'posts', id: postId })
      expect(remove).toMatchObject({ isError: true, text: `No posts record with id ${postId}` })
      // The include of posts from users keeps to the same rows.
      const authors = await call(stranger, 'crud_list', { model: 'users', include: ['posts'] })
      const theirs = (authors.json as { records: Array<{ posts: Array<{ id: number }> }> }).records
      expect(theirs.flatMap((user) => user.posts.map((post) => post.id))).not.toContain(postId)
      // Its author reaches it (the row filter sees the token's user).
      const author = await connect(access, { ...reader, userId: String(authorId) }, queries)
      const own = await call(author, 'crud_list', { model: 'posts' })
      expect((own.json as { records: Array<{ id: number }> }).records.map((r) => r.id)).toContain(
        postId,
      )
      // The list query decides what is readable: the MCP policy cannot say it a second time.
      await expect(
        connect({ models: { posts: { read: ['id', 'title'] } } }, reader, queries),
      ).rejects.toThrow(/posts\.read: its readable fields are its list query's/)
    })

    it('crud_aggregate counts the rows crud_list lists, for each caller', async () => {
      const queries = Object.fromEntries(resources.map(({ name, query }) => [name, query]))
      const access: McpAccessOptions = { models: { posts: { tools: ['crud_list'] } } }
      for (const userId of ['0', String(authorId)]) {
        for (const given of [queries, undefined]) {
          const client = await connect(access, { ...reader, userId }, given)
          const list = await call(client, 'crud_list', { model: 'posts', count: 'exact' })
          expect(list.isError, list.text).toBe(false)
          const { records, total } = list.json as { records: Array<{ id: number }>; total: number }
          // The author's own draft is among their rows, and no one else's.
          expect(records.map((record) => record.id).includes(postId), userId).toBe(
            userId === String(authorId),
          )
          const counted = await call(client, 'crud_aggregate', { model: 'posts', count: true })
          expect(counted.isError, counted.text).toBe(false)
          const { data } = counted.json as { data: Array<{ count: number }> }
          expect(data[0]!.count, `user ${userId}`).toBe(total)
        }
      }
    })

    it('without the list queries handed over, crud_* still keep to the model’s declared rows and fields', async () => {
      // The controllers declared each model's policy (defineListQuery); the tools are given
      // no `queries`, and must not fall back to a list of their own.
      const access: McpAccessOptions = {
        approval: [],
        models: {
          posts: { tools: ['crud_list', 'crud_update', 'crud_delete'] },
          users: { tools: ['crud_list'] },
        },
      }
      const stranger = await connect(access, { ...writer, userId: '0' })
      const list = await call(stranger, 'crud_list', { model: 'posts' })
      expect(list.isError).toBe(false)
      const listed = (list.json as { records: Array<{ id: number }> }).records.map((r) => r.id)
      expect(listed).toContain(publishedId)
      expect(listed).not.toContain(postId)
      const update = await call(stranger, 'crud_update', {
        model: 'posts',
        id: postId,
        data: { title: 'Taken' },
      })
      expect(update).toMatchObject({ isError: true, text: `No posts record with id ${postId}` })
      const authors = await call(stranger, 'crud_list', { model: 'users', include: ['posts'] })
      expect(authors.isError).toBe(false)
      const theirs = (authors.json as { records: Array<{ posts: Array<{ id: number }> }> }).records
      expect(theirs.flatMap((user) => user.posts.map((post) => post.id))).not.toContain(postId)
      // The readable fields are at most those the list query shows.
      const usersFields = new Set(
        resources.find(({ name }) => name === 'users')!.query.fields.map((field) => field.name),
      )
      const users = (authors.json as { records: Array<Record<string, unknown>> }).records
      for (const user of users)
        for (const key of Object.keys(user))
          if (key !== 'posts') expect(usersFields.has(key), key).toBe(true)
    })

    it('the grant narrows the same queries: read-only lists the read tools alone, and no include of an ungranted model', async () => {
      const queries = Object.fromEntries(resources.map(({ name, query }) => [name, query]))
      const access: McpAccessOptions = {
        models: {
          posts: { tools: ['crud_list', 'crud_update', 'crud_delete'] },
          users: { tools: ['crud_list'] },
        },
      }
      const granted = await connect(
        access,
        { ...writer, userId: '0', grant: { posts: ['read'] } },
        queries,
      )
      const tools = (await granted.listTools()).tools.map((tool) => tool.name)
      // Reading is crud_list and its sibling crud_aggregate.
      expect(tools).toEqual(['crud_list', 'crud_aggregate'])
      // A tool the grant does not give is not listed, and a call to it anyway is not granted.
      const refused = await call(granted, 'crud_update', {
        model: 'posts',
        id: publishedId,
        data: { title: 'Taken' },
      })
      expect(refused.isError).toBe(true)
      expect(refused.text).toBe('Not granted: crud_update on posts (the user did not allow it)')
      const list = await call(granted, 'crud_list', { model: 'posts' })
      expect(list.isError).toBe(false)
      const ids = (list.json as { records: Array<{ id: number }> }).records.map((r) => r.id)
      expect(ids).toContain(publishedId)
      expect(ids).not.toContain(postId)
      const users = await call(granted, 'crud_list', { model: 'users' })
      expect(users).toMatchObject({ isError: true, text: expect.stringMatching(/^Not granted/) })
      const author = await call(granted, 'crud_list', { model: 'posts', include: ['author'] })
      expect(author).toMatchObject({ isError: true, text: expect.stringMatching(/^Not granted/) })
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
