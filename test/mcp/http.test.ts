import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createModelRegistry, type Database } from '../../src/db/index.ts'
import { describeEachDatabase, type TestDatabase } from '../support/databases.ts'
import { call, ok, snapshot } from './support/client.ts'
import { HeadlessOAuthProvider, type McpTestApp, serveMcpTestApp } from './support/http-app.ts'
import { createTestTables, schemaFor } from './support/schema.ts'

type Page = { records: Array<Record<string, unknown>>; total: number }

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'curl', version: '1' },
  },
}

describeEachDatabase('the /mcp endpoint over Streamable HTTP', (backend) => {
  let test: TestDatabase
  let database: Database
  let app: McpTestApp

  beforeAll(async () => {
    test = await backend.create()
    database = test.database
    await createTestTables(database)
    app = await serveMcpTestApp(
      database,
      createModelRegistry(schemaFor(database), database.dialect),
    )
  })

  afterAll(async () => {
    await app?.close()
    await test?.cleanup()
  })

  /** Runs the whole OAuth flow with the SDK client as `userId` of `tenantId`; returns a connected client. */
  async function authorizedClient(
    userId: string,
    tenantId?: string,
  ): Promise<{ client: Client; token: string }> {
    const provider = new HeadlessOAuthProvider(app.signIn(userId, tenantId))
    const first = new StreamableHTTPClientTransport(app.mcpUrl, { authProvider: provider })
    await expect(new Client({ name: 't', version: '1' }).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError,
    )
    expect(provider.code).toBeTruthy()
    await first.finishAuth(provider.code!)
    const token = provider.tokens()?.access_token
    expect(token).toBeTruthy()
    const client = new Client({ name: 'kiln-http-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(app.mcpUrl, { authProvider: provider }))
    return { client, token: token! }
  }

  describe('without a valid token', () => {
    it('answers 401 with the protected-resource metadata URL', async () => {
      const response = await fetch(app.mcpUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify(INITIALIZE),
      })
      expect(response.status).toBe(401)
      expect(response.headers.get('www-authenticate')).toBe(
        `Bearer resource_metadata="${app.origin}/.well-known/oauth-protected-resource/mcp"`,
      )
      const metadata = await (
        await fetch(`${app.origin}/.well-known/oauth-protected-resource/mcp`)
      ).json()
      expect(metadata).toMatchObject({ resource: `${app.origin}/mcp` })
    })

    it('answers 401 invalid_token with the reason for a bad token', async () => {
      const response = await fetch(app.mcpUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: 'Bearer not.a.jwt',
        },
        body: JSON.stringify(INITIALIZE),
      })
      expect(response.status).toBe(401)
      const challenge = response.headers.get('www-authenticate') ?? ''
      expect(challenge).toContain('error="invalid_token"')
      expect(challenge).toContain(
        `resource_metadata="${app.origin}/.well-known/oauth-protected-resource/mcp"`,
      )
      expect(challenge).toMatch(/error_description="[^"]+"/)
    })

    it('answers CORS preflights before authentication', async () => {
      const response = await fetch(app.mcpUrl, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://assistant.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
        },
      })
      expect(response.status).toBe(204)
      expect(response.headers.get('access-control-allow-origin')).toBe('*')
      expect(response.headers.get('access-control-allow-headers')?.toLowerCase()).toContain(
        'authorization',
      )
    })
  })

  describe('with a token from the OAuth flow', () => {
    let a: { client: Client; token: string }
    let b: { client: Client; token: string }

    beforeAll(async () => {
      a = await authorizedClient('1', 'tenant-a')
      b = await authorizedClient('2', 'tenant-b')
    })

    afterAll(async () => {
      await a?.client.close()
      await b?.client.close()
    })

    it('lists the data tools', async () => {
      const { tools } = await a.client.listTools()
      expect(tools.map((tool) => tool.name).sort()).toEqual([
        'crud_create',
        'crud_delete',
        'crud_list',
        'crud_update',
      ])
      expect(tools.find((t) => t.name === 'crud_create')?.inputSchema.required).toEqual([
        'model',
        'data',
      ])
    })

    it("calls each tool as the token's user and tenant", async () => {
      const note = await ok(a.client, 'crud_create', { model: 'notes', data: { title: 'From A' } })
      expect(note).toMatchObject({ title: 'From A', tenant_id: 'tenant-a' })
      await ok(b.client, 'crud_create', { model: 'notes', data: { title: 'From B' } })

      const seenByA = await ok<Page>(a.client, 'crud_list', { model: 'notes' })
      expect(seenByA.records.map((r) => r.title)).toEqual(['From A'])
      const seenByB = await ok<Page>(b.client, 'crud_list', { model: 'notes' })
      expect(seenByB.records.map((r) => r.title)).toEqual(['From B'])

      const before = await snapshot(database)
      const foreign = await call(b.client, 'crud_update', {
        model: 'notes',
        id: note.id,
        data: { title: 'B was here' },
      })
      expect(foreign.isError).toBe(true)
      const foreignDelete = await call(b.client, 'crud_delete', { model: 'notes', id: note.id })
      expect(foreignDelete.isError).toBe(true)
      const forged = await call(b.client, 'crud_create', {
        model: 'notes',
        data: { title: 'forged', tenant_id: 'tenant-a' },
      })
      expect(forged.isError).toBe(true)
      expect(await snapshot(database)).toEqual(before)

      const updated = await ok(a.client, 'crud_update', {
        model: 'notes',
        id: note.id,
        data: { title: 'A edited' },
      })
      expect(updated.title).toBe('A edited')
      expect(await ok(a.client, 'crud_delete', { model: 'notes', id: note.id })).toEqual({
        message: 'Deleted',
        id: note.id,
      })
    })

    it('gives tool errors for bad input over HTTP too', async () => {
      const before = await snapshot(database)
      const outcome = await call(a.client, 'crud_list', {
        model: 'notes',
        per_page: 1e20,
        page: -1,
      })
      expect(outcome.isError).toBe(true)
      const unknown = await call(a.client, 'crud_create', { model: 'ghosts', data: {} })
      expect(unknown.text).toBe('Unknown model "ghosts". Valid models: notes, users')
      expect(await snapshot(database)).toEqual(before)
    })

    it('answers GET and DELETE with 405: the endpoint is stateless', async () => {
      for (const method of ['GET', 'DELETE']) {
        const response = await fetch(app.mcpUrl, {
          method,
          headers: { authorization: `Bearer ${a.token}`, accept: 'text/event-stream' },
        })
        expect(response.status).toBe(405)
        expect(response.headers.get('allow')).toBe('POST')
      }
    })

    it('answers a plain JSON-RPC POST with JSON and no session id', async () => {
      const response = await fetch(app.mcpUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${a.token}`,
        },
        body: JSON.stringify(INITIALIZE),
      })
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toContain('application/json')
      expect(response.headers.get('mcp-session-id')).toBeNull()
      const body = (await response.json()) as { result: { serverInfo: { name: string } } }
      expect(body.result.serverInfo.name).toBe('kiln')
    })
  })
})
