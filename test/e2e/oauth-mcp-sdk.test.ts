import { auth } from '@modelcontextprotocol/sdk/client/auth.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Harness, serveHarness } from '../oauth/support.ts'
import { consentChoices } from '../support/consent-choices.ts'
import { MemoryOAuthProvider } from '../support/memory-oauth-provider.ts'

/** The provider of an MCP client application, with a fixed `state` the test can look for. */
class MemoryProvider extends MemoryOAuthProvider {
  constructor() {
    super('http://127.0.0.1:7777/oauth/callback')
  }
  state() {
    return 'sdk-state'
  }
}

/**
 * The MCP SDK client's `auth()` from zero against the server: protected-resource discovery
 * from `/mcp`, authorization-server metadata, registration, consent, token. (The full MCP
 * round trip with a tool call runs against the demo's `/mcp` in the MCP suites.)
 */
describe('MCP SDK auth() from zero', () => {
  let server: Harness & { close(): Promise<void> }
  beforeAll(async () => {
    server = await serveHarness({ clock: null })
  })
  afterAll(async () => server?.close())

  it('discovers, registers, gets consent, exchanges the code and calls /mcp', async () => {
    const provider = new MemoryProvider()
    const serverUrl = `${server.issuer}/mcp`
    expect(await auth(provider, { serverUrl })).toBe('REDIRECT')
    expect(provider.client?.client_id).toBeTruthy()
    const url = provider.authorizationUrl!
    expect(url.origin + url.pathname).toBe(`${server.issuer}/authorize`)
    expect(url.searchParams.get('resource')).toBe(serverUrl)
    expect(url.searchParams.get('code_challenge_method')).toBe('S256')

    const cookie = server.sessions.login('alice')
    const page = await fetch(url, { headers: { cookie } })
    expect(page.status).toBe(200)
    const html = await page.text()
    const field = (name: string) =>
      new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? ''
    const decided = await fetch(`${server.issuer}/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams([
        ['request_id', field('request_id')],
        ['csrf_token', field('csrf_token')],
        ['decision', 'approve'],
        ...consentChoices(html),
      ]),
    })
    const callback = new URL(decided.headers.get('location') ?? '')
    expect(callback.searchParams.get('state')).toBe('sdk-state')
    expect(callback.searchParams.get('iss')).toBe(server.issuer)

    const code = callback.searchParams.get('code') ?? ''
    expect(await auth(provider, { serverUrl, authorizationCode: code })).toBe('AUTHORIZED')
    const access = provider.saved?.access_token
    const res = await fetch(serverUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${access}` },
    })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ sub: 'alice', aud: serverUrl })

    // With saved tokens, auth() refreshes through the (rotated) refresh token.
    const before = provider.saved?.refresh_token
    expect(await auth(provider, { serverUrl })).toBe('AUTHORIZED')
    expect(provider.saved?.refresh_token).toBeTruthy()
    expect(provider.saved?.refresh_token).not.toBe(before)
  })
})
