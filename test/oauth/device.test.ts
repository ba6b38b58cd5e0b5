import { decodeJwt } from 'jose'
import { describe, expect, it } from 'vitest'
import {
  createHarness,
  form,
  formWithCookie,
  type Harness,
  hiddenField,
  registerClient,
} from './support.ts'

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

async function start(harness: Harness, extra: Record<string, string> = {}) {
  const client = await registerClient(harness)
  const res = await harness.request(
    '/device_authorization',
    form({ client_id: client.client_id, ...extra }),
  )
  expect(res.status).toBe(200)
  expect(res.headers.get('cache-control')).toBe('no-store')
  const body = (await res.json()) as Record<string, string | number>
  return {
    clientId: client.client_id,
    body,
    deviceCode: String(body.device_code),
    userCode: String(body.user_code),
  }
}

function poll(harness: Harness, deviceCode: string, clientId: string) {
  return harness.request(
    '/token',
    form({ grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId }),
  )
}

async function pollError(res: Response): Promise<string> {
  expect(res.status).toBe(400)
  return ((await res.json()) as { error: string }).error
}

/** Enters a user code on /device and answers the consent page. */
async function decide(
  harness: Harness,
  cookie: string,
  typed: string,
  decision?: 'approve' | 'deny',
) {
  const entry = await harness.request('/device', { headers: { cookie } })
  const csrf = hiddenField(await entry.text(), 'csrf_token')
  const confirm = await harness.request(
    '/device',
    formWithCookie(cookie, { user_code: typed, csrf_token: csrf }),
  )
  if (!decision) return confirm
  expect(confirm.status).toBe(200)
  const html = await confirm.text()
  return harness.request(
    '/device',
    formWithCookie(cookie, {
      user_code: hiddenField(html, 'user_code'),
      csrf_token: csrf,
      decision,
    }),
  )
}

describe('POST /device_authorization', () => {
  it('answers the spec fields: codes, URIs, 600 s, 5 s', async () => {
    const harness = createHarness()
    const { body, userCode, deviceCode } = await start(harness)
    expect(userCode).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/)
    expect(deviceCode).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(Buffer.from(deviceCode, 'base64url').length).toBe(32)
    expect(body.verification_uri).toBe('http://127.0.0.1:3000/device')
    expect(body.verification_uri_complete).toBe(
      `http://127.0.0.1:3000/device?user_code=${userCode}`,
    )
    expect(body.expires_in).toBe(600)
    expect(body.interval).toBe(5)
  })

  it('refuses unknown clients and clients without the device grant', async () => {
    const harness = createHarness()
    const unknown = await harness.request('/device_authorization', form({ client_id: 'nope' }))
    expect(unknown.status).toBe(401)
    expect(((await unknown.json()) as { error: string }).error).toBe('invalid_client')
    const codeOnly = await registerClient(harness, { grant_types: ['authorization_code'] })
    const res = await harness.request(
      '/device_authorization',
      form({ client_id: codeOnly.client_id }),
    )
    expect(await pollError(res)).toBe('unauthorized_client')
  })

  it('refuses a foreign resource with invalid_target', async () => {
    const harness = createHarness()
    const client = await registerClient(harness)
    const res = await harness.request(
      '/device_authorization',
      form({ client_id: client.client_id, resource: 'https://other.example/mcp' }),
    )
    expect(await pollError(res)).toBe('invalid_target')
  })
})

describe('device grant polling state machine', () => {
  it('pending → slow_down → pending → approved → consumed', async () => {
    const harness = createHarness()
    const clock = harness.clock!
    const { clientId, deviceCode, userCode } = await start(harness)
    expect(await pollError(await poll(harness, deviceCode, clientId))).toBe('authorization_pending')
    clock.advance(1000)
    expect(await pollError(await poll(harness, deviceCode, clientId))).toBe('slow_down')
    // The interval is now 10 s; a poller that keeps it is served.
    clock.advance(10_000)
    expect(await pollError(await poll(harness, deviceCode, clientId))).toBe('authorization_pending')
    clock.advance(9_000)
    expect(await pollError(await poll(harness, deviceCode, clientId))).toBe('slow_down')
    // Now 15 s.
    clock.advance(15_000)
    expect(await pollError(await poll(harness, deviceCode, clientId))).toBe('authorization_pending')

    const cookie = harness.sessions.login('bob')
    const result = await decide(harness, cookie, userCode.toLowerCase().replace('-', ''), 'approve')
    expect(result.status).toBe(200)
    expect(await result.text()).toContain('Device connected')

    clock.advance(15_000)
    const ok = await poll(harness, deviceCode, clientId)
    expect(ok.status).toBe(200)
    expect(ok.headers.get('cache-control')).toBe('no-store')
    const tokens = (await ok.json()) as Record<string, string | number>
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 3600 })
    expect(decodeJwt(String(tokens.access_token))).toMatchObject({
      sub: 'bob',
      tenant_id: 'tenant-b',
      client_id: clientId,
      aud: 'http://127.0.0.1:3000/mcp',
      iss: 'http://127.0.0.1:3000',
    })
    clock.advance(15_000)
    // Consumed: the code is gone.
    expect(await pollError(await poll(harness, deviceCode, clientId))).toBe('expired_token')
  })

  it('slow_down grows by 5 s each time', async () => {
    const harness = createHarness()
    const { clientId, deviceCode } = await start(harness)
    await poll(harness, deviceCode, clientId)
    const errors: string[] = []
    for (let i = 0; i < 3; i++)
      errors.push(await pollError(await poll(harness, deviceCode, clientId)))
    expect(errors).toEqual(['slow_down', 'slow_down', 'slow_down'])
    harness.clock!.advance(19_999)
    expect(await pollError(await poll(harness, deviceCode, clientId))).toBe('slow_down')
    harness.clock!.advance(25_000)
    expect(await pollError(await poll(harness, deviceCode, clientId))).toBe('authorization_pending')
  })

  it('access_denied after the user denies', async () => {
    const harness = createHarness()
    const { clientId, deviceCode, userCode } = await start(harness)
    const result = await decide(harness, harness.sessions.login('alice'), userCode, 'deny')
    expect(await result.text()).toContain('Request denied')
    expect(await pollError(await poll(harness, deviceCode, clientId))).toBe('access_denied')
  })

  it('expired_token after 600 s, pending or approved', async () => {
    const harness = createHarness()
    const pending = await start(harness)
    const approved = await start(harness)
    await decide(harness, harness.sessions.login('alice'), approved.userCode, 'approve')
    harness.clock!.advance(600_000)
    expect(await pollError(await poll(harness, pending.deviceCode, pending.clientId))).toBe(
      'expired_token',
    )
    expect(await pollError(await poll(harness, approved.deviceCode, approved.clientId))).toBe(
      'expired_token',
    )
  })

  it('expired_token for an unknown device code', async () => {
    const harness = createHarness()
    const { clientId } = await start(harness)
    expect(await pollError(await poll(harness, 'unknown-device-code', clientId))).toBe(
      'expired_token',
    )
  })

  it("fails when polled with another client's client_id", async () => {
    const harness = createHarness()
    const { deviceCode, userCode, clientId } = await start(harness)
    await decide(harness, harness.sessions.login('alice'), userCode, 'approve')
    const other = await registerClient(harness)
    expect(await pollError(await poll(harness, deviceCode, other.client_id))).toBe('invalid_grant')
    // The rightful client still gets its token.
    expect((await poll(harness, deviceCode, clientId)).status).toBe(200)
  })
})

describe('/device pages', () => {
  it('sends unauthenticated visitors to login and back to /device with the code', async () => {
    const harness = createHarness()
    const res = await harness.request('/device?user_code=BCDF-GHJK')
    expect(res.status).toBe(302)
    const location = new URL(res.headers.get('location') ?? '', 'http://x')
    expect(location.pathname).toBe('/login')
    expect(location.searchParams.get('return_to')).toBe('/device?user_code=BCDF-GHJK')
  })

  it('pre-fills the code from verification_uri_complete, to be confirmed', async () => {
    const harness = createHarness()
    const { userCode } = await start(harness)
    const cookie = harness.sessions.login('alice')
    const res = await harness.request(`/device?user_code=${userCode.toLowerCase()}`, {
      headers: { cookie },
    })
    const html = await res.text()
    expect(html).toContain(`value="${userCode}"`)
    expect(html).toContain('name="user_code"')
  })

  it('accepts the code case-insensitively, with or without the hyphen', async () => {
    const harness = createHarness()
    for (const variant of [
      (c: string) => c,
      (c: string) => c.toLowerCase(),
      (c: string) => c.replace('-', ''),
      (c: string) => c.toLowerCase().replace('-', ''),
    ]) {
      const { userCode } = await start(harness)
      const res = await decide(harness, harness.sessions.login('alice'), variant(userCode))
      expect(res.status).toBe(200)
      expect(await res.text()).toMatch(/value="approve"/)
    }
  })

  it('takes user and tenant from the session, never from the form', async () => {
    const harness = createHarness()
    const { clientId, deviceCode, userCode } = await start(harness)
    const cookie = harness.sessions.login('bob')
    const entry = await harness.request('/device', { headers: { cookie } })
    const csrf = hiddenField(await entry.text(), 'csrf_token')
    const res = await harness.request(
      '/device',
      formWithCookie(cookie, {
        user_code: userCode,
        csrf_token: csrf,
        decision: 'approve',
        user_id: 'alice',
        tenant_id: 'tenant-a',
      }),
    )
    expect(res.status).toBe(200)
    const tokens = (await (await poll(harness, deviceCode, clientId)).json()) as {
      access_token: string
    }
    expect(decodeJwt(tokens.access_token)).toMatchObject({ sub: 'bob', tenant_id: 'tenant-b' })
  })

  it('is approvable once', async () => {
    const harness = createHarness()
    const { userCode } = await start(harness)
    expect(
      (await decide(harness, harness.sessions.login('alice'), userCode, 'approve')).status,
    ).toBe(200)
    const again = await decide(harness, harness.sessions.login('bob'), userCode)
    expect(again.status).toBe(400)
    // Even a hand-made decision POST for the decided code is refused.
    const cookie = harness.sessions.login('bob')
    const entry = await harness.request('/device', { headers: { cookie } })
    const csrf = hiddenField(await entry.text(), 'csrf_token')
    const direct = await harness.request(
      '/device',
      formWithCookie(cookie, { user_code: userCode, csrf_token: csrf, decision: 'deny' }),
    )
    expect(direct.status).toBe(400)
  })

  it('answers wrong codes with one generic message', async () => {
    const harness = createHarness()
    const cookie = harness.sessions.login('alice')
    const unknown = await decide(harness, cookie, 'BCDF-GHJK')
    const malformed = await decide(harness, cookie, 'hello')
    expect(unknown.status).toBe(400)
    expect(malformed.status).toBe(400)
    const message = 'That code is not valid. Check the code on your device and try again.'
    expect(await unknown.text()).toContain(message)
    expect(await malformed.text()).toContain(message)
  })

  it('throttles wrong codes per session', async () => {
    const harness = createHarness({ userCodeLimits: { perSession: { max: 3, windowMs: 60_000 } } })
    const { userCode } = await start(harness)
    const cookie = harness.sessions.login('alice')
    for (let i = 0; i < 3; i++)
      expect((await decide(harness, cookie, 'BCDF-GHJK')).status).toBe(400)
    const blocked = await decide(harness, cookie, userCode)
    expect(blocked.status).toBe(429)
    // Another person is not affected; after the window the first one is served again.
    expect((await decide(harness, harness.sessions.login('bob'), userCode)).status).toBe(200)
    harness.clock!.advance(60_001)
    expect((await decide(harness, cookie, userCode)).status).toBe(200)
  })

  it('throttles wrong codes per IP across sessions', async () => {
    const harness = createHarness({ userCodeLimits: { perIp: { max: 4, windowMs: 60_000 } } })
    for (const user of ['alice', 'bob', 'carol', 'alice']) {
      expect((await decide(harness, harness.sessions.login(user), 'BCDF-GHJK')).status).toBe(400)
    }
    expect((await decide(harness, harness.sessions.login('bob'), 'BCDF-GHJK')).status).toBe(429)
  })

  it('behind a trusted proxy, a forged left-most X-Forwarded-For buys no new per-IP budget', async () => {
    const harness = createHarness({
      trustProxy: true,
      userCodeLimits: { perIp: { max: 4, windowMs: 60_000 } },
    })
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) {
      const cookie = harness.sessions.login(`user-${i}`)
      const entry = await harness.request('/device', { headers: { cookie } })
      const csrf = hiddenField(await entry.text(), 'csrf_token')
      const init = formWithCookie(cookie, { user_code: 'BCDF-GHJK', csrf_token: csrf })
      const headers = {
        ...(init.headers as Record<string, string>),
        'x-forwarded-for': `198.51.100.${i}, 203.0.113.7`,
      }
      statuses.push((await harness.request('/device', { ...init, headers })).status)
    }
    expect(statuses).toEqual([400, 400, 400, 400, 429, 429])
  })

  it('refuses a wrong CSRF token', async () => {
    const harness = createHarness()
    const { userCode } = await start(harness)
    const cookie = harness.sessions.login('alice')
    const res = await harness.request(
      '/device',
      formWithCookie(cookie, { user_code: userCode, csrf_token: 'forged', decision: 'approve' }),
    )
    expect(res.status).toBe(403)
  })

  it('sends a POST without a session to login', async () => {
    const harness = createHarness()
    const res = await harness.request('/device', form({ user_code: 'BCDF-GHJK', csrf_token: 'x' }))
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/login?return_to=%2Fdevice')
  })
})
