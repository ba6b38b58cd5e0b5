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

describe('Origin and Host on the OAuth endpoints', () => {
  async function consentPage() {
    const harness = createHarness()
    const client = await registerClient(harness)
    const cookie = harness.sessions.login('alice')
    const html = await (
      await harness.request(authorizeQuery(authorizeParams(client.client_id)), {
        headers: { cookie },
      })
    ).text()
    const decide = (headers: Record<string, string>) => {
      const init = formWithCookie(cookie, {
        request_id: hiddenField(html, 'request_id'),
        csrf_token: hiddenField(html, 'csrf_token'),
        decision: 'approve',
      })
      return harness.request('/authorize', {
        ...init,
        headers: { ...(init.headers as Record<string, string>), ...headers },
      })
    }
    return { harness, client, cookie, decide }
  }

  it('refuses a consent post from another origin, and the request stays answerable', async () => {
    const { decide } = await consentPage()
    expect((await decide({ origin: 'http://evil.example' })).status).toBe(403)
    expect((await decide({ origin: 'http://127.0.0.1:3000' })).status).toBe(303)
  })

  it('accepts a consent post without Origin (the CSRF token still guards it)', async () => {
    const { decide } = await consentPage()
    expect((await decide({})).status).toBe(303)
  })

  it('refuses another Host on the pages (DNS rebinding)', async () => {
    const { harness, client, cookie } = await consentPage()
    const res = await harness.request(authorizeQuery(authorizeParams(client.client_id)), {
      headers: { cookie, host: 'rebound.example:3000' },
    })
    expect(res.status).toBe(403)
    const device = await harness.request('/device', { headers: { cookie, host: 'evil.example' } })
    expect(device.status).toBe(403)
  })

  it('leaves the token and registration endpoints open to non-browser and cross-origin clients', async () => {
    const harness = createHarness()
    const registered = await harness.request('/register', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://localhost:6274' },
      body: JSON.stringify({ redirect_uris: [REDIRECT] }),
    })
    expect(registered.status).toBe(201)
    const { client_id } = (await registered.json()) as { client_id: string }
    const init = form({
      grant_type: 'authorization_code',
      client_id,
      code: 'unknown',
      code_verifier: VERIFIER,
    })
    const token = await harness.request('/token', {
      ...init,
      headers: { ...(init.headers as Record<string, string>), origin: 'http://evil.example' },
    })
    expect(token.status).toBe(400)
    expect(((await token.json()) as { error: string }).error).toBe('invalid_grant')
  })
})

describe('limits on public endpoints', () => {
  it('limits /device_authorization per client address', async () => {
    const harness = createHarness({
      deviceLimits: { authorizationPerIp: { max: 3, windowMs: 60_000 } },
    })
    const client = await registerClient(harness)
    const statuses: number[] = []
    for (let i = 0; i < 5; i++) {
      statuses.push(
        (await harness.request('/device_authorization', form({ client_id: client.client_id })))
          .status,
      )
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429])
  })

  it('limits polls with unknown device codes per client address', async () => {
    const harness = createHarness({
      deviceLimits: { unknownCodePerIp: { max: 2, windowMs: 60_000 } },
    })
    const client = await registerClient(harness)
    const poll = (deviceCode: string) =>
      harness.request(
        '/token',
        form({
          grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
          device_code: deviceCode,
          client_id: client.client_id,
        }),
      )
    expect((await poll('guess-1')).status).toBe(400)
    expect((await poll('guess-2')).status).toBe(400)
    const limited = await poll('guess-3')
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    // A real device code still polls normally.
    const started = (await (
      await harness.request('/device_authorization', form({ client_id: client.client_id }))
    ).json()) as { device_code: string }
    const pending = await poll(started.device_code)
    expect(((await pending.json()) as { error: string }).error).toBe('authorization_pending')
  })

  it('may require an initial access token to register (RFC 7591 §3)', async () => {
    const harness = createHarness({ initialAccessToken: ['first-token', 'second-token'] })
    const attempt = (authorization?: string) =>
      harness.request('/register', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify({ redirect_uris: [REDIRECT] }),
      })
    for (const refused of [undefined, 'Bearer wrong-token', 'Basic second-token']) {
      const res = await attempt(refused)
      expect(res.status).toBe(401)
      expect(((await res.json()) as { error: string }).error).toBe('invalid_token')
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/)
    }
    expect((await attempt('Bearer second-token')).status).toBe(201)
    expect((await attempt('bearer first-token')).status).toBe(201)
  })

  it('refuses maxUnusedClients below 1', () => {
    expect(() => createHarness({ maxUnusedClients: 0 })).toThrow(/maxUnusedClients/)
  })

  it('refuses client metadata over 8 KiB', async () => {
    const harness = createHarness()
    const res = await harness.request('/register', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT], extra: 'x'.repeat(9000) }),
    })
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: string }).error).toBe('invalid_client_metadata')
  })
})
