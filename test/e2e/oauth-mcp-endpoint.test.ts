import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { createMcpServer, type McpEndpointOptions, mcpEndpoint } from '../../src/mcp/index.ts'
import { codeGrant, createHarness, type Harness } from '../oauth/support.ts'

/** The authorization server of the harness, and kiln's MCP endpoint at its `/mcp`. */
function mcpApp(harness: Harness, options: Partial<McpEndpointOptions> = {}) {
  const app = new Hono()
  app.route(
    '/mcp',
    mcpEndpoint({
      validator: harness.validator,
      resourceMetadataUrl: harness.resourceMetadataUrl,
      createServer: () => createMcpServer(),
      ...options,
    }),
  )
  return (init: RequestInit) => app.request(`${harness.issuer}/mcp`, init)
}

const initialize = {
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  body: JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'test', version: '1' },
    },
  }),
}

describe('the 401 challenge of /mcp', () => {
  it('names the scopes the data tools use (MCP 2025-11-25: SHOULD carry scope)', async () => {
    const harness = createHarness()
    const post = mcpApp(harness)
    const missing = await post(initialize)
    expect(missing.status).toBe(401)
    expect(missing.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${harness.resourceMetadataUrl}", scope="mcp:read mcp:write"`,
    )
    const invalid = await post({
      ...initialize,
      headers: { ...initialize.headers, authorization: 'Bearer not.a.jwt' },
    })
    expect(invalid.status).toBe(401)
    const challenge = invalid.headers.get('www-authenticate') ?? ''
    expect(challenge).toContain('error="invalid_token"')
    expect(challenge).toContain('scope="mcp:read mcp:write"')
  })

  it('names the scopes every request needs, or challengeScopes when given', async () => {
    const harness = createHarness()
    const required = await mcpApp(harness, { scopes: ['mcp:read'] })(initialize)
    expect(required.headers.get('www-authenticate')).toContain('scope="mcp:read mcp:write"')
    const chosen = await mcpApp(harness, { challengeScopes: ['mcp:read'] })(initialize)
    expect(chosen.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${harness.resourceMetadataUrl}", scope="mcp:read"`,
    )
  })
})

describe('subscriptions/listen on /mcp', () => {
  it('is acknowledged with nothing to deliver and ends at once', async () => {
    const harness = createHarness()
    const { tokens } = await codeGrant(harness)
    const post = mcpApp(harness)
    const res = await post({
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${tokens.access_token}`,
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'subscriptions/listen',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'subscriptions/listen',
        params: {
          notifications: { toolsListChanged: true, resourcesListChanged: true },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/event-stream')
    // The stream ends by itself: reading it to the end returns.
    const messages = (await res.text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice('data: '.length)) as Record<string, unknown>)
    expect(messages).toHaveLength(2)
    expect(messages[0]).toMatchObject({
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: {} },
    })
    expect(messages[1]).toMatchObject({ id: 7, result: { resultType: 'complete' } })
  })
})
