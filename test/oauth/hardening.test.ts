import { describe, expect, it } from 'vitest'
import {
  approve,
  authorizeQuery,
  CHALLENGE,
  createHarness,
  form,
  formWithCookie,
  hiddenField,
  registerClient,
  VERIFIER,
} from './support.ts'

const REDIRECT = 'http://127.0.0.1:9999/callback'

function authorizeParams(clientId: string, extra: Record<string, string | undefined> = {}) {
  return {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    state: 'st',
    ...extra,
  }
}

describe('POST /token: client_id in HTTP Basic', () => {
  it('accepts a percent-encoded client_id in the Basic user part', async () => {
    const harness = createHarness()
    const client = await registerClient(harness)
    const cookie = harness.sessions.login('alice')
    const location = await approve(harness, cookie, authorizeParams(client.client_id))
    const basic = Buffer.from(`${encodeURIComponent(client.client_id)}:`).toString('base64')
    const init = form({
      grant_type: 'authorization_code',
      code: location.searchParams.get('code') ?? '',
      code_verifier: VERIFIER,
      redirect_uri: REDIRECT,
    })
    const res = await harness.request('/token', {
      ...init,
      headers: { ...(init.headers as Record<string, string>), authorization: `Basic ${basic}` },
    })
    expect(res.status).toBe(200)
  })

  it('answers 401 invalid_client, not 500, for bad percent-encoding in the user part', async () => {
    const harness = createHarness()
    const basic = Buffer.from('%E0%A4%A:').toString('base64')
    const init = form({ grant_type: 'authorization_code', code: 'x', code_verifier: VERIFIER })
    const res = await harness.request('/token', {
      ...init,
      headers: { ...(init.headers as Record<string, string>), authorization: `Basic ${basic}` },
    })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic/)
    expect(((await res.json()) as { error: string }).error).toBe('invalid_client')
  })
})

describe('POST /token: redirect_uri only when /authorize had it (RFC 6749 §4.1.3)', () => {
  async function codeWithout(redirectUri: string | undefined) {
    const harness = createHarness()
    const client = await registerClient(harness)
    const cookie = harness.sessions.login('alice')
    const location = await approve(
      harness,
      cookie,
      authorizeParams(client.client_id, { redirect_uri: redirectUri }),
    )
    return { harness, clientId: client.client_id, code: location.searchParams.get('code') ?? '' }
  }

  it('does not require redirect_uri when the authorization request omitted it', async () => {
    const { harness, clientId, code } = await codeWithout(undefined)
    const res = await harness.request(
      '/token',
      form({
        grant_type: 'authorization_code',
        code,
        code_verifier: VERIFIER,
        client_id: clientId,
      }),
    )
    expect(res.status).toBe(200)
  })

  it('still requires it when the authorization request included it', async () => {
    const { harness, clientId, code } = await codeWithout(REDIRECT)
    const res = await harness.request(
      '/token',
      form({
        grant_type: 'authorization_code',
        code,
        code_verifier: VERIFIER,
        client_id: clientId,
      }),
    )
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: string }).error).toBe('invalid_request')
  })

  it('refuses a different redirect_uri even when the authorization request omitted it', async () => {
    const { harness, clientId, code } = await codeWithout(undefined)
    const res = await harness.request(
      '/token',
      form({
        grant_type: 'authorization_code',
        code,
        code_verifier: VERIFIER,
        client_id: clientId,
        redirect_uri: 'http://127.0.0.1:9999/other',
      }),
    )
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: string }).error).toBe('invalid_grant')
  })
})

describe('/authorize: an invalid loopback port is a 400 page, never a 500', () => {
  it('on the error redirect path', async () => {
    const harness = createHarness()
    const client = await registerClient(harness)
    const res = await harness.request(
      authorizeQuery(
        authorizeParams(client.client_id, {
          redirect_uri: 'http://127.0.0.1:99999/callback',
          response_type: 'token',
        }),
      ),
    )
    expect(res.status).toBe(400)
    expect(res.headers.get('location')).toBeNull()
  })

  it('on the approve path', async () => {
    const harness = createHarness()
    const client = await registerClient(harness)
    const cookie = harness.sessions.login('alice')
    const res = await harness.request(
      authorizeQuery(
        authorizeParams(client.client_id, { redirect_uri: 'http://127.0.0.1:99999/callback' }),
      ),
      { headers: { cookie } },
    )
    expect(res.status).toBe(400)
    expect(await res.text()).toContain('redirect')
  })
})

describe('POST /authorize: only the session that was shown the page can act on it', () => {
  it("another session's attempt is refused and leaves the request answerable", async () => {
    const harness = createHarness()
    const client = await registerClient(harness)
    const victim = harness.sessions.login('alice')
    const page = await harness.request(authorizeQuery(authorizeParams(client.client_id)), {
      headers: { cookie: victim },
    })
    const html = await page.text()
    const requestId = hiddenField(html, 'request_id')
    const attacker = harness.sessions.login('bob')
    const attackerPage = await harness.request('/device', { headers: { cookie: attacker } })
    const attackerCsrf = hiddenField(await attackerPage.text(), 'csrf_token')
    const burned = await harness.request(
      '/authorize',
      formWithCookie(attacker, {
        request_id: requestId,
        csrf_token: attackerCsrf,
        decision: 'deny',
      }),
    )
    expect(burned.status).toBe(403)
    const answered = await harness.request(
      '/authorize',
      formWithCookie(victim, {
        request_id: requestId,
        csrf_token: hiddenField(html, 'csrf_token'),
        decision: 'approve',
      }),
    )
    expect(answered.status).toBe(303)
    expect(new URL(answered.headers.get('location') ?? '').searchParams.get('code')).toBeTruthy()
  })
})

describe('client names: bidi and zero-width controls are stripped', () => {
  it('from the registration and from the consent page', async () => {
    const harness = createHarness()
    const client = await registerClient(harness, {
      client_name: 'Good\u202EtxT.exe\u200B App\u2066\uFEFF',
    })
    expect(client.client_name).toBe('GoodtxT.exe App')
    const cookie = harness.sessions.login('alice')
    const page = await harness.request(authorizeQuery(authorizeParams(client.client_id)), {
      headers: { cookie },
    })
    const html = await page.text()
    expect(html).toContain('GoodtxT.exe App')
    expect(html).not.toMatch(/[\u202A-\u202E\u2066-\u2069\u200B-\u200F\uFEFF]/)
  })
})
