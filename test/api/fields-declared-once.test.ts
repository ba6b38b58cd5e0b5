import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { ListQueryDefinition } from '../../src/api/index.ts'
import { silentLogger } from '../../src/core/index.ts'
import { createModelRegistry } from '../../src/db/index.ts'
import { createDataTools, createMcpServer, type McpQueries } from '../../src/mcp/index.ts'
import { call, connectInMemory } from '../mcp/support/client.ts'
import { describeEachDatabase } from '../support/databases.ts'
import {
  type RunningApi,
  type ScaffoldedApp,
  scaffoldApp,
  startGeneratedApi,
} from './rest/generated-app.ts'

/**
 * The one edit a developer makes to stop showing users' `email`: drop it from the generated
 * `usersFields` (and `search`), and leave `toUserResource`, which still returns it, alone.
 */
function hideEmail(outDir: string): void {
  const path = join(outDir, 'controllers/users.ts')
  const source = readFileSync(path, 'utf8')
  const patched = source.replaceAll("'email', ", '')
  if (
    patched === source ||
    !readFileSync(join(outDir, 'resources/user.ts'), 'utf8').includes('email')
  )
    throw new Error('users controller or resource changed')
  writeFileSync(path, patched)
}

/** The one edit that stops writes of posts' `published`: drop it from the request's fields. */
function stopWritingPublished(outDir: string): void {
  const path = join(outDir, 'requests/post.ts')
  const source = readFileSync(path, 'utf8')
  const patched = source
    .replace(/^\s*published: z\..*\n/m, '')
    .replace(/\bpublished: true(, )?/, '')
    .replace('.partial({ })', '')
  if (patched === source || /\bpublished:/.test(patched)) throw new Error('posts request changed')
  writeFileSync(path, patched)
}

interface Document {
  components: { schemas: Record<string, { properties: object; required?: string[] }> }
}

describeEachDatabase(
  'a field left out of the list query or a request schema is left out everywhere',
  (backend) => {
    let scaffolded: ScaffoldedApp
    let api: RunningApi
    let queries: McpQueries
    let userId: number
    let client: Client | undefined

    beforeAll(async () => {
      scaffolded = await scaffoldApp(backend.dialect)
      hideEmail(scaffolded.outDir)
      stopWritingPublished(scaffolded.outDir)
      api = await startGeneratedApi(scaffolded, backend)
      const generated: { apiResources: Array<{ name: string; query: ListQueryDefinition }> } =
        await import(join(scaffolded.outDir, 'routes.ts'))
      queries = Object.fromEntries(generated.apiResources.map(({ name, query }) => [name, query]))
      userId = await api.createUser()
      await api.request('POST', '/api/v1/posts', { title: 'T', body: 'B', author_id: userId })
    })
    afterAll(async () => {
      await client?.close()
      await api?.close()
      scaffolded?.cleanup()
    })

    const json = async (method: string, path: string, body?: unknown) => {
      const response = await api.request(method, path, body)
      expect(response.status, `${method} ${path}`).toBeLessThan(300)
      return (await response.json()) as { data: unknown }
    }

    it('REST: the list, the show and the answers to create and update', async () => {
      const created = await api.request('POST', '/api/v1/users', {
        email: 'new@example.com',
        name: 'New',
        password: 'correct horse battery staple',
      })
      expect(created.status).toBe(201)
      const answers = [
        ((await created.json()) as { data: object }).data,
        ...((await json('GET', '/api/v1/users')).data as object[]),
        (await json('GET', `/api/v1/users/${userId}`)).data,
        (await json('PATCH', `/api/v1/users/${userId}`, { name: 'Renamed' })).data,
        ...((await json('PATCH', '/api/v1/users', [{ id: userId, name: 'Again' }]))
          .data as object[]),
      ]
      for (const record of answers) {
        expect(record).toHaveProperty('name')
        expect(record).not.toHaveProperty('email')
      }
    })

    it('REST: include=author, and filter, sort and fields= refuse it', async () => {
      const posts = (await json('GET', '/api/v1/posts?include=author')).data as Array<{
        author: object
      }>
      expect(posts[0]?.author).toHaveProperty('name')
      expect(posts[0]?.author).not.toHaveProperty('email')
      for (const query of ['filter[email]=a@b.c', 'sort=email', 'fields=id,email']) {
        const response = await api.request('GET', `/api/v1/users?${query}`)
        expect(response.status, query).toBe(422)
      }
    })

    it('the OpenAPI documents, 3.0 and 3.1', async () => {
      for (const path of ['/api/openapi.json', '/api/openapi-3.1.json']) {
        const document = (await (await api.request('GET', path)).json()) as Document
        const user = document.components.schemas.User!
        expect(user.properties, path).toHaveProperty('name')
        expect(user.properties, path).not.toHaveProperty('email')
        expect(user.required ?? [], path).not.toContain('email')
      }
    })

    it('the MCP tools, with the list queries handed over and without', async () => {
      const schema = await import(join(scaffolded.root, 'src/schema.ts'))
      const models = createModelRegistry(schema, api.database.dialect)
      for (const handed of [queries, undefined]) {
        const tools = createDataTools({
          database: api.database,
          models,
          access: { models: { users: { tools: ['crud_list'] } } },
          queries: handed,
          logger: silentLogger(),
        })
        client = await connectInMemory(
          createMcpServer({ dataTools: { tools, caller: { userId: '1', scopes: ['mcp:read'] } } }),
        )
        const list = await call(client, 'crud_list', { model: 'users' })
        const records = (list.json as { records: object[] }).records
        expect(records.length).toBeGreaterThan(0)
        for (const record of records) {
          expect(record).toHaveProperty('name')
          expect(record).not.toHaveProperty('email')
        }
        await client.close()
        client = undefined
      }
    })

    it('writes: a field the request schema does not take is refused by REST and the MCP tools', async () => {
      const rest = await api.request('POST', '/api/v1/posts', {
        title: 'T',
        body: 'B',
        author_id: userId,
        published: true,
      })
      expect(rest.status).toBe(422)
      const schema = await import(join(scaffolded.root, 'src/schema.ts'))
      const models = createModelRegistry(schema, api.database.dialect)
      const tools = createDataTools({
        database: api.database,
        models,
        // Neither the list queries nor the request schemas handed over: the declared ones rule.
        access: { approval: [], models: { posts: { tools: ['crud_create', 'crud_update'] } } },
        logger: silentLogger(),
      })
      client = await connectInMemory(
        createMcpServer({
          dataTools: { tools, caller: { userId: '1', scopes: ['mcp:read', 'mcp:write'] } },
        }),
      )
      const data = { title: 'T', body: 'B', author_id: userId }
      const refused = await call(client, 'crud_create', {
        model: 'posts',
        data: { ...data, published: true },
      })
      expect(refused.isError, refused.text).toBe(true)
      expect(refused.text).toContain('published')
      const created = await call(client, 'crud_create', { model: 'posts', data })
      expect(created.isError, created.text).toBe(false)
      const id = (created.json as { id: number }).id
      const update = await call(client, 'crud_update', {
        model: 'posts',
        id,
        data: { published: true },
      })
      expect(update.isError, update.text).toBe(true)
      // `write` may name fewer of the request's fields, never one it does not take.
      expect(() =>
        createDataTools({
          database: api.database,
          models,
          access: { models: { posts: { tools: ['crud_create'], write: ['title', 'published'] } } },
          logger: silentLogger(),
        }),
      ).toThrow(/posts\.published in write: its create request does not take it/)
    })
  },
)
