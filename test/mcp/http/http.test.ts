import { request as httpRequest } from 'node:http'
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from '@modelcontextprotocol/client'
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createModelRegistry, type Database } from '../../../src/db/index.ts'
import { hmacKey, signAccessToken } from '../../../src/oauth/protocol/access-token.ts'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'
import { call, INITIALIZE, ok, snapshot } from '../support/client.ts'
import {
  HeadlessOAuthProvider,
  type McpTestApp,
  SECRET,
  serveMcpTestApp,
} from '../support/http-app.ts'
import { createTestTables, schemaFor } from '../support/schema.ts'

type Page = { records: Array<Record<string, unknown>>; total: number }

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
        `Bearer resource_metadata="${app.origin}/.well-known/oauth-protected-resource/mcp", scope="mcp:read mcp:write"`,
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

  it('puts the CORS headers on actual answers, refusals included', async () => {
    const response = await fetch(app.mcpUrl, {
      method: 'POST',
      headers: { origin: app.origin, 'content-type': 'application/json' },
      body: JSON.stringify(INITIALIZE),
    })
    expect(response.status).toBe(401)
    expect(response.headers.get('access-control-allow-origin')).toBe('*')
    expect(response.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate')
    // Not answered twice: the answer's own headers are kept beside them.
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer /)
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
        'crud_aggregate',
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
      expect(response.headers.get('access-control-allow-origin')).toBe('*')
      const body = (await response.json()) as { result: { serverInfo: { name: string } } }
      expect(body.result.serverInfo.name).toBe('kiln')
    })

    it('serves a 2026-07-28 client and a 2025 client of the v2 SDK with the OAuth token', async () => {
      for (const mode of [{ pin: '2026-07-28' }, 'legacy'] as const) {
        const client = new ClientV2(
          { name: 'kiln-v2', version: '1.0.0' },
          { versionNegotiation: { mode } },
        )
        await client.connect(
          new StreamableHTTPClientTransportV2(app.mcpUrl, {
            requestInit: { headers: { authorization: `Bearer ${a.token}` } },
          }),
        )
        try {
          expect(client.getProtocolEra()).toBe(mode === 'legacy' ? 'legacy' : 'modern')
          const { tools } = await client.listTools()
          expect(tools.map((tool) => tool.name).sort()).toEqual([
            'crud_aggregate',
            'crud_create',
            'crud_delete',
            'crud_list',
            'crud_update',
          ])
          const note = await ok(client, 'crud_create', { model: 'notes', data: { title: 'v2' } })
          expect(note.tenant_id).toBe('tenant-a')
          const page = await ok<Page>(client, 'crud_list', { model: 'notes' })
          expect(page.records.map((r) => r.title)).toContain('v2')
          await ok(client, 'crud_delete', { model: 'notes', id: note.id })
        } finally {
          await client.close()
        }
      }
    })

    it('answers server/discover with the standard headers, envelope and result _meta', async () => {
      const envelope = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'curl', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      }
      const post = (method: string, params: Record<string, unknown>, name?: string) =>
        fetch(app.mcpUrl, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            authorization: `Bearer ${a.token}`,
            'mcp-protocol-version': '2026-07-28',
            'mcp-method': method,
            ...(name ? { 'mcp-name': name } : {}),
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method,
            params: { ...params, _meta: envelope },
          }),
        })
      const discover = await post('server/discover', {})
      expect(discover.status).toBe(200)
      const found = (await discover.json()) as {
        result: { supportedVersions: string[]; capabilities: { tools: unknown } }
      }
      expect(found.result.supportedVersions).toContain('2026-07-28')
      expect(found.result.capabilities.tools).toEqual({ listChanged: false })
      const listed = await post(
        'tools/call',
        { name: 'crud_list', arguments: { model: 'notes' } },
        'crud_list',
      )
      expect(listed.status).toBe(200)
      const result = (await listed.json()) as { result: { _meta?: Record<string, unknown> } }
      expect(result.result._meta?.['io.modelcontextprotocol/serverInfo']).toMatchObject({
        name: 'kiln',
      })
      // The Mcp-Name header must name the tool of the body.
      const mismatched = await post(
        'tools/call',
        { name: 'crud_list', arguments: { model: 'notes' } },
        'crud_delete',
      )
      expect(mismatched.status).toBe(400)
    })
  })

  describe('scopes and origins', () => {
    async function tokenWith(scope: string, tenant = 'tenant-a'): Promise<string> {
      const now = Math.floor(Date.now() / 1000)
      return signAccessToken(
        {
          iss: app.origin,
          aud: `${app.origin}/mcp`,
          sub: '1',
          tenant_id: tenant,
          client_id: 'test-client',
          grant_id: 'test-grant',
          scope,
          iat: now,
          exp: now + 600,
          jti: `jti-${scope}-${tenant}-${now}`,
        },
        hmacKey(SECRET),
      )
    }

    it('asks for mcp:write with 403 insufficient_scope when a read-only token calls a writing tool', async () => {
      const token = await tokenWith('mcp:read')
      for (const mode of [{ pin: '2026-07-28' }, 'legacy'] as const) {
        const client = new ClientV2(
          { name: 'kiln-v2', version: '1.0.0' },
          { versionNegotiation: { mode } },
        )
        await client.connect(
          new StreamableHTTPClientTransportV2(app.mcpUrl, {
            requestInit: { headers: { authorization: `Bearer ${token}` } },
          }),
        )
        try {
          const page = await ok<Page>(client, 'crud_list', { model: 'notes' })
          expect(page.total).toBeGreaterThanOrEqual(0)
        } finally {
          await client.close()
        }
      }
      const before = await snapshot(database)
      const response = await fetch(app.mcpUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'crud_create', arguments: { model: 'notes', data: { title: 'x' } } },
        }),
      })
      expect(response.status).toBe(403)
      const challenge = response.headers.get('www-authenticate') ?? ''
      expect(challenge).toMatch(/^Bearer /)
      expect(challenge).toContain('error="insufficient_scope"')
      expect(challenge).toContain('scope="mcp:write"')
      expect(challenge).toContain(
        `resource_metadata="${app.origin}/.well-known/oauth-protected-resource/mcp"`,
      )
      expect(await snapshot(database)).toEqual(before)
    })

    it('keeps concurrent calls of different grants apart, in both eras', async () => {
      const writerA = await tokenWith('mcp:read mcp:write', 'tenant-a')
      const writerB = await tokenWith('mcp:read mcp:write', 'tenant-b')
      const readerB = await tokenWith('mcp:read', 'tenant-b')
      const envelope = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'concurrent', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      }
      const callTool = (token: string, modern: boolean, name: string, args: object) =>
        fetch(app.mcpUrl, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            authorization: `Bearer ${token}`,
            'mcp-protocol-version': modern ? '2026-07-28' : '2025-11-25',
            ...(modern ? { 'mcp-method': 'tools/call', 'mcp-name': name } : {}),
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name, arguments: args, ...(modern ? { _meta: envelope } : {}) },
          }),
        })
      const resultOf = async (response: Response) => {
        expect(response.status).toBe(200)
        const body = (await response.json()) as {
          result: { isError?: boolean; structuredContent: Record<string, unknown> }
        }
        expect(body.result.isError).toBeUndefined()
        return body.result.structuredContent
      }
      const seeded = [
        await resultOf(
          await callTool(writerA, false, 'crud_create', { model: 'notes', data: { title: 'A' } }),
        ),
        await resultOf(
          await callTool(writerB, true, 'crud_create', { model: 'notes', data: { title: 'B' } }),
        ),
      ]
      const list = { model: 'notes', per_page: 100 }
      const rounds = Array.from({ length: 6 }, (_, i) => i % 2 === 0)
      const [listsA, listsB, writesA, refusedB] = await Promise.all([
        Promise.all(rounds.map((modern) => callTool(writerA, modern, 'crud_list', list))),
        Promise.all(rounds.map((modern) => callTool(readerB, modern, 'crud_list', list))),
        Promise.all(
          rounds.map((modern) =>
            callTool(writerA, modern, 'crud_create', { model: 'notes', data: { title: 'A+' } }),
          ),
        ),
        Promise.all(
          rounds.map((modern) =>
            callTool(readerB, modern, 'crud_create', { model: 'notes', data: { title: 'B+' } }),
          ),
        ),
      ])
      type Note = { title: string; tenant_id: string }
      for (const [responses, tenant, own] of [
        [listsA, 'tenant-a', 'A'],
        [listsB, 'tenant-b', 'B'],
      ] as const) {
        for (const response of responses) {
          const { records } = (await resultOf(response)) as { records: Note[] }
          expect(records.map((record) => record.title)).toContain(own)
          expect(records.every((record) => record.tenant_id === tenant)).toBe(true)
        }
      }
      const created = await Promise.all(writesA.map(resultOf))
      expect(created.every((note) => note.tenant_id === 'tenant-a')).toBe(true)
      for (const response of refusedB) {
        expect(response.status).toBe(403)
        expect(response.headers.get('www-authenticate')).toContain('scope="mcp:write"')
      }
      for (const note of [...seeded, ...created]) {
        const owner = note.tenant_id === 'tenant-a' ? writerA : writerB
        await resultOf(await callTool(owner, false, 'crud_delete', { model: 'notes', id: note.id }))
      }
    })

    it('refuses a foreign Origin or Host with 403 before anything else (DNS rebinding)', async () => {
      const token = await tokenWith('mcp:read mcp:write')
      const init = (headers: Record<string, string>) => ({
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${token}`,
          ...headers,
        },
        body: JSON.stringify(INITIALIZE),
      })
      const evil = await fetch(app.mcpUrl, init({ origin: 'http://evil.example' }))
      expect(evil.status).toBe(403)
      const nullOrigin = await fetch(app.mcpUrl, init({ origin: 'null' }))
      expect(nullOrigin.status).toBe(403)
      const rebound = await rawPost(app.mcpUrl, { ...init({}).headers, host: 'evil.example' })
      expect(rebound).toBe(403)
      const own = await fetch(app.mcpUrl, init({ origin: app.origin }))
      expect(own.status).toBe(200)
      const native = await fetch(app.mcpUrl, init({}))
      expect(native.status).toBe(200)
    })
  })
})

/** A POST with a chosen Host header (fetch does not let one set it). */
function rawPost(url: URL, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers },
      (response) => {
        response.resume()
        resolve(response.statusCode ?? 0)
      },
    )
    request.on('error', reject)
    request.end(JSON.stringify(INITIALIZE))
  })
}
