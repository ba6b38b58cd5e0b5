import { describe, expect, it } from 'vitest'
import {
  approve,
  authorizeQuery,
  CHALLENGE,
  createHarness,
  formWithCookie,
  hiddenField,
  registerClient,
} from './support.ts'

const REDIRECT = 'http://127.0.0.1:9999/callback'

async function setup() {
  const harness = createHarness()
  const client = await registerClient(harness)
  const params = {
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    state: 'st-123',
  }
  return { harness, client, params, cookie: harness.sessions.login('alice') }
}

async function get(
  harness: Awaited<ReturnType<typeof setup>>['harness'],
  query: string,
  cookie?: string,
) {
  return harness.request(query, cookie ? { headers: { cookie } } : {})
}

function expectErrorPage(res: Response) {
  expect(res.status).toBe(400)
  expect(res.headers.get('location')).toBeNull()
  expect(res.headers.get('content-type')).toContain('text/html')
  expect(res.headers.get('x-frame-options')).toBe('DENY')
}

function expectRedirectError(res: Response, error: string, state = 'st-123') {
  expect(res.status).toBe(302)
  const location = new URL(res.headers.get('location') ?? '')
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECT)
  expect(location.searchParams.get('error')).toBe(error)
  expect(location.searchParams.get('state')).toBe(state)
  expect(location.searchParams.get('iss')).toBe('http://127.0.0.1:3000')
  return location
}

describe('GET /authorize: client and redirect URI first, as an error page', () => {
  it('shows an error page (never a redirect) for an unknown client', async () => {
    const { harness, params, cookie } = await setup()
    expectErrorPage(await get(harness, authorizeQuery({ ...params, client_id: 'nope' }), cookie))
  })

  it('shows an error page for a missing client_id', async () => {
    const { harness, params, cookie } = await setup()
    expectErrorPage(await get(harness, authorizeQuery({ ...params, client_id: undefined }), cookie))
  })

  it('shows an error page for an unregistered redirect URI', async () => {
    const { harness, params, cookie } = await setup()
    for (const uri of [
      'http://127.0.0.1:9999/other',
      'http://localhost:9999/callback',
      'https://evil.example/callback',
      'http://127.0.0.1:9999/callback?x=1',
      'http://127.0.0.1:9999/callback#frag',
    ]) {
      expectErrorPage(await get(harness, authorizeQuery({ ...params, redirect_uri: uri }), cookie))
    }
  })

  it('shows an error page for a bad redirect URI even when other parameters are also wrong', async () => {
    const { harness, params } = await setup()
    expectErrorPage(
      await get(
        harness,
        authorizeQuery({
          ...params,
          redirect_uri: 'https://evil.example/cb',
          response_type: 'token',
        }),
      ),
    )
  })

  it('accepts another port on an http loopback redirect URI (RFC 8252 §7.3)', async () => {
    const { harness, params, cookie } = await setup()
    const res = await get(
      harness,
      authorizeQuery({ ...params, redirect_uri: 'http://127.0.0.1:51234/callback' }),
      cookie,
    )
    expect(res.status).toBe(200)
  })
})

describe('GET /authorize: later errors go back to the client with error, state and iss', () => {
  it('refuses plain PKCE with invalid_request', async () => {
    const { harness, params, cookie } = await setup()
    const res = await get(
      harness,
      authorizeQuery({ ...params, code_challenge_method: 'plain' }),
      cookie,
    )
    expectRedirectError(res, 'invalid_request')
  })

  it('refuses a missing code_challenge with invalid_request', async () => {
    const { harness, params, cookie } = await setup()
    const res = await get(harness, authorizeQuery({ ...params, code_challenge: undefined }), cookie)
    expectRedirectError(res, 'invalid_request')
  })

  it('refuses a missing code_challenge_method with invalid_request', async () => {
    const { harness, params, cookie } = await setup()
    const res = await get(
      harness,
      authorizeQuery({ ...params, code_challenge_method: undefined }),
      cookie,
    )
    expectRedirectError(res, 'invalid_request')
  })

  it('refuses a malformed code_challenge', async () => {
    const { harness, params, cookie } = await setup()
    const res = await get(harness, authorizeQuery({ ...params, code_challenge: 'short' }), cookie)
    expectRedirectError(res, 'invalid_request')
  })

  it('refuses other response types with unsupported_response_type', async () => {
    const { harness, params, cookie } = await setup()
    const res = await get(harness, authorizeQuery({ ...params, response_type: 'token' }), cookie)
    expectRedirectError(res, 'unsupported_response_type')
  })

  it('refuses repeated parameters with invalid_request', async () => {
    const { harness, params, cookie } = await setup()
    const res = await get(harness, `${authorizeQuery(params)}&code_challenge=${CHALLENGE}`, cookie)
    expectRedirectError(res, 'invalid_request')
  })

  it('refuses a foreign, relative or fragment resource with invalid_target', async () => {
    const { harness, params, cookie } = await setup()
    for (const resource of [
      'https://other.example/mcp',
      'http://127.0.0.1:3000/other',
      '/mcp',
      'http://127.0.0.1:3000/mcp#x',
    ]) {
      const res = await get(harness, authorizeQuery({ ...params, resource }), cookie)
      expectRedirectError(res, 'invalid_target')
    }
  })

  it('refuses a client that did not register authorization_code', async () => {
    const { harness, params, cookie } = await setup()
    const device = await registerClient(harness, {
      grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'authorization_code'],
    })
    const deviceOnly = await registerClient(harness, {
      grant_types: ['urn:ietf:params:oauth:grant-type:device_code'],
    })
    expect(device.client_id).toBeTruthy()
    const res = await get(
      harness,
      authorizeQuery({ ...params, client_id: deviceOnly.client_id }),
      cookie,
    )
    // A device-only client registered the callback too, so the error can go back to it.
    expectRedirectError(res, 'unauthorized_client')
  })

  it('validates the request before sending anyone to login', async () => {
    const { harness, params } = await setup()
    const res = await get(harness, authorizeQuery({ ...params, code_challenge_method: 'plain' }))
    expectRedirectError(res, 'invalid_request')
  })

  it('omits state when the client sent none, but still sends iss', async () => {
    const { harness, params, cookie } = await setup()
    const res = await get(
      harness,
      authorizeQuery({ ...params, state: undefined, response_type: 'token' }),
      cookie,
    )
    const location = new URL(res.headers.get('location') ?? '')
    expect(location.searchParams.has('state')).toBe(false)
    expect(location.searchParams.get('iss')).toBe('http://127.0.0.1:3000')
  })
})

describe('GET /authorize: login and consent', () => {
  it('sends unauthenticated users to login with a relative return path', async () => {
    const { harness, params } = await setup()
    const query = authorizeQuery(params)
    const res = await get(harness, query)
    expect(res.status).toBe(302)
    const location = res.headers.get('location') ?? ''
    expect(location.startsWith('/login?return_to=')).toBe(true)
    expect(new URL(location, 'http://x').searchParams.get('return_to')).toBe(query)
  })

  it('shows client name, redirect host, scopes, Approve and Deny to signed-in users', async () => {
    const { harness, params, cookie } = await setup()
    const res = await get(harness, authorizeQuery(params), cookie)
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('Test Client')
    expect(html).toContain('127.0.0.1:9999')
    expect(html).toContain('Read your data through the assistant tools')
    expect(html).toContain('Create, change and delete your data through the assistant tools')
    expect(html).toContain('mcp:read')
    expect(html).toContain('mcp:write')
    expect(html).toMatch(/<button[^>]*value="approve"[^>]*>Approve<\/button>/)
    expect(html).toMatch(/<button[^>]*value="deny"[^>]*>Deny<\/button>/)
  })

  it('escapes the client name', async () => {
    const { harness, params, cookie } = await setup()
    const client = await registerClient(harness, { client_name: '<script>alert(1)</script>' })
    const res = await get(
      harness,
      authorizeQuery({ ...params, client_id: client.client_id }),
      cookie,
    )
    const html = await res.text()
    expect(html).not.toContain('<script>alert(1)')
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
  })

  it('ignores unknown scopes and grants the known ones', async () => {
    const { harness, params, cookie } = await setup()
    const res = await get(
      harness,
      authorizeQuery({ ...params, scope: 'claudeai mcp:read' }),
      cookie,
    )
    const html = await res.text()
    expect(html).toContain('mcp:read')
    expect(html).not.toContain('mcp:write')
    expect(html).not.toContain('claudeai')
  })
})

describe('POST /authorize', () => {
  it('approves with 303 to the redirect URI with code, state and iss', async () => {
    const { harness, params, cookie } = await setup()
    const location = await approve(harness, cookie, params)
    expect(location.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(location.searchParams.get('state')).toBe('st-123')
    expect(location.searchParams.get('iss')).toBe('http://127.0.0.1:3000')
  })

  it('denies with 303 access_denied, state and iss', async () => {
    const { harness, params, cookie } = await setup()
    const location = await approve(harness, cookie, params, 'deny')
    expect(location.searchParams.get('error')).toBe('access_denied')
    expect(location.searchParams.get('state')).toBe('st-123')
    expect(location.searchParams.get('iss')).toBe('http://127.0.0.1:3000')
    expect(location.searchParams.has('code')).toBe(false)
  })

  async function consent(ctx: Awaited<ReturnType<typeof setup>>) {
    const res = await get(ctx.harness, authorizeQuery(ctx.params), ctx.cookie)
    const html = await res.text()
    return { requestId: hiddenField(html, 'request_id'), csrf: hiddenField(html, 'csrf_token') }
  }

  it('refuses a wrong CSRF token, and the request stays answerable', async () => {
    const ctx = await setup()
    const { requestId, csrf } = await consent(ctx)
    const bad = await ctx.harness.request(
      '/authorize',
      formWithCookie(ctx.cookie, {
        request_id: requestId,
        csrf_token: `${csrf}x`,
        decision: 'approve',
      }),
    )
    expect(bad.status).toBe(403)
    expect(bad.headers.get('location')).toBeNull()
    const good = await ctx.harness.request(
      '/authorize',
      formWithCookie(ctx.cookie, { request_id: requestId, csrf_token: csrf, decision: 'approve' }),
    )
    expect(good.status).toBe(303)
  })

  it('refuses a missing CSRF token', async () => {
    const ctx = await setup()
    const { requestId } = await consent(ctx)
    const res = await ctx.harness.request(
      '/authorize',
      formWithCookie(ctx.cookie, { request_id: requestId, decision: 'approve' }),
    )
    expect(res.status).toBe(403)
  })

  it('refuses a request shown to another session (re-checked against the stored request)', async () => {
    const ctx = await setup()
    const { requestId } = await consent(ctx)
    const other = ctx.harness.sessions.login('alice')
    const page = await get(ctx.harness, authorizeQuery(ctx.params), other)
    const otherCsrf = hiddenField(await page.text(), 'csrf_token')
    const res = await ctx.harness.request(
      '/authorize',
      formWithCookie(other, { request_id: requestId, csrf_token: otherCsrf, decision: 'approve' }),
    )
    expect(res.status).toBe(403)
  })

  it('refuses approval after the session switched tenant (tenant isolation)', async () => {
    const ctx = await setup()
    const { requestId, csrf } = await consent(ctx)
    ctx.harness.sessions.switchTenant(ctx.cookie, 'tenant-b')
    const res = await ctx.harness.request(
      '/authorize',
      formWithCookie(ctx.cookie, { request_id: requestId, csrf_token: csrf, decision: 'approve' }),
    )
    expect(res.status).toBe(403)
  })

  it('answers each consent page once', async () => {
    const ctx = await setup()
    const { requestId, csrf } = await consent(ctx)
    const fields = { request_id: requestId, csrf_token: csrf, decision: 'approve' }
    expect(
      (await ctx.harness.request('/authorize', formWithCookie(ctx.cookie, fields))).status,
    ).toBe(303)
    expect(
      (await ctx.harness.request('/authorize', formWithCookie(ctx.cookie, fields))).status,
    ).toBe(400)
  })

  it('refuses a POST without a session', async () => {
    const ctx = await setup()
    const { requestId, csrf } = await consent(ctx)
    const res = await ctx.harness.request(
      '/authorize',
      formWithCookie('sid=0000', { request_id: requestId, csrf_token: csrf, decision: 'approve' }),
    )
    expect(res.status).toBe(401)
  })

  it('expires the consent page after 10 minutes', async () => {
    const ctx = await setup()
    const { requestId, csrf } = await consent(ctx)
    ctx.harness.clock?.advance(600_001)
    const res = await ctx.harness.request(
      '/authorize',
      formWithCookie(ctx.cookie, { request_id: requestId, csrf_token: csrf, decision: 'approve' }),
    )
    expect(res.status).toBe(400)
  })
})
