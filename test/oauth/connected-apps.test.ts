import { describe, expect, it } from 'vitest'
import { insufficientScopeChallenge } from '../../src/oauth/index.ts'
import { codeGrant, createHarness, formWithCookie, hiddenField } from './support.ts'

function mcp(harness: ReturnType<typeof createHarness>, token: unknown) {
  return harness.request('/mcp', { method: 'POST', headers: { authorization: `Bearer ${token}` } })
}

describe('GET /connected-apps', () => {
  it('sends unauthenticated people to login and back', async () => {
    const harness = createHarness()
    const res = await harness.request('/connected-apps')
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe('/login?return_to=%2Fconnected-apps')
  })

  it("lists the person's own applications with their permissions in plain words", async () => {
    const harness = createHarness()
    const { cookie } = await codeGrant(harness, 'alice')
    await codeGrant(harness, 'bob')
    const res = await harness.request('/connected-apps', { headers: { cookie } })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    const html = await res.text()
    expect(html.match(/<h2>/g)).toHaveLength(1)
    expect(html).toContain('Test Client')
    expect(html).toContain('Read your data through the assistant tools')
    expect(html).toContain('Disconnect Test Client')
  })

  it('shows an empty list', async () => {
    const harness = createHarness()
    const cookie = harness.sessions.login('carol')
    const html = await (await harness.request('/connected-apps', { headers: { cookie } })).text()
    expect(html).toContain('No applications are connected')
  })
})

describe('POST /connected-apps', () => {
  it('disconnects one application: its tokens stop working', async () => {
    const harness = createHarness()
    const { cookie, clientId, tokens } = await codeGrant(harness, 'alice')
    const page = await (await harness.request('/connected-apps', { headers: { cookie } })).text()
    const res = await harness.request(
      '/connected-apps',
      formWithCookie(cookie, { csrf_token: hiddenField(page, 'csrf_token'), client_id: clientId }),
    )
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/connected-apps?disconnected=1')
    expect((await mcp(harness, tokens.access_token)).status).toBe(401)
    const after = await (await harness.request('/connected-apps', { headers: { cookie } })).text()
    expect(after).toContain('No applications are connected')
  })

  it("needs the session's CSRF token and cannot reach another person's grants", async () => {
    const harness = createHarness()
    const alice = await codeGrant(harness, 'alice')
    const bobCookie = harness.sessions.login('bob')
    // Bob has nothing listed, so his CSRF token comes from another of his forms.
    const bobPage = await (
      await harness.request('/device', { headers: { cookie: bobCookie } })
    ).text()
    const forged = await harness.request(
      '/connected-apps',
      formWithCookie(alice.cookie, { csrf_token: 'wrong', client_id: alice.clientId }),
    )
    expect(forged.status).toBe(403)
    const bobs = await harness.request(
      '/connected-apps',
      formWithCookie(bobCookie, {
        csrf_token: hiddenField(bobPage, 'csrf_token'),
        client_id: alice.clientId,
      }),
    )
    expect(bobs.status).toBe(303)
    expect((await mcp(harness, alice.tokens.access_token)).status).toBe(200)
  })
})

describe('insufficientScopeChallenge', () => {
  it('builds the step-up challenge with the needed scope', () => {
    expect(
      insufficientScopeChallenge({
        resourceMetadataUrl: 'http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp',
        scopes: ['mcp:write'],
      }),
    ).toBe(
      'Bearer resource_metadata="http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", error_description="This operation needs the scope: mcp:write", scope="mcp:write"',
    )
  })
})
