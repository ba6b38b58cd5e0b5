import { decodeJwt, decodeProtectedHeader } from 'jose'
import { describe, expect, it } from 'vitest'
import {
  approve,
  CHALLENGE,
  codeGrant,
  createHarness,
  form,
  type Harness,
  registerClient,
  VERIFIER,
} from './support.ts'

const REDIRECT = 'http://127.0.0.1:9999/callback'

async function issueCode(harness: Harness, extra: Record<string, string> = {}, user = 'alice') {
  const client = await registerClient(harness)
  const cookie = harness.sessions.login(user)
  const location = await approve(harness, cookie, {
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    state: 's',
    ...extra,
  })
  return { clientId: client.client_id, code: location.searchParams.get('code') ?? '' }
}

function exchange(harness: Harness, fields: Record<string, string | string[] | undefined>) {
  return harness.request('/token', form({ grant_type: 'authorization_code', ...fields }))
}

async function expectError(res: Response, status: number, error: string) {
  expect(res.status).toBe(status)
  expect(res.headers.get('cache-control')).toBe('no-store')
  const body = (await res.json()) as { error: string; error_description: string }
  expect(body.error).toBe(error)
  expect(typeof body.error_description).toBe('string')
}

async function mcp(harness: Harness, token: unknown) {
  return harness.request('/mcp', { method: 'POST', headers: { authorization: `Bearer ${token}` } })
}

describe('POST /token: authorization code', () => {
  it('issues a Bearer JWT with the claims, no-store, and a refresh token', async () => {
    const harness = createHarness()
    const { code, clientId } = await issueCode(harness)
    const res = await exchange(harness, {
      code,
      code_verifier: VERIFIER,
      redirect_uri: REDIRECT,
      client_id: clientId,
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const body = (await res.json()) as Record<string, unknown>
    expect(body).toMatchObject({
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'mcp:read mcp:write',
    })
    expect(typeof body.refresh_token).toBe('string')
    const token = String(body.access_token)
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'HS256', typ: 'at+jwt' })
    const claims = decodeJwt(token)
    expect(claims).toMatchObject({
      sub: 'alice',
      tenant_id: 'tenant-a',
      client_id: clientId,
      scope: 'mcp:read mcp:write',
      aud: 'http://127.0.0.1:3000/mcp',
      iss: 'http://127.0.0.1:3000',
    })
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(3600)
    expect(typeof claims.jti).toBe('string')
    expect((await mcp(harness, token)).status).toBe(200)
  })

  it('omits tenant_id for a single-tenant session', async () => {
    const harness = createHarness()
    const { code, clientId } = await issueCode(harness, {}, 'carol')
    const res = await exchange(harness, {
      code,
      code_verifier: VERIFIER,
      redirect_uri: REDIRECT,
      client_id: clientId,
    })
    const claims = decodeJwt(String(((await res.json()) as { access_token: string }).access_token))
    expect(claims.sub).toBe('carol')
    expect('tenant_id' in claims).toBe(false)
  })

  it('refuses a wrong verifier without consuming the code', async () => {
    const harness = createHarness()
    const { code, clientId } = await issueCode(harness)
    const base = { code, redirect_uri: REDIRECT, client_id: clientId }
    await expectError(
      await exchange(harness, { ...base, code_verifier: 'x'.repeat(43) }),
      400,
      'invalid_grant',
    )
    expect((await exchange(harness, { ...base, code_verifier: VERIFIER })).status).toBe(200)
  })

  it('refuses a replayed code and revokes the tokens issued from it', async () => {
    const harness = createHarness()
    const { code, clientId } = await issueCode(harness)
    const fields = { code, code_verifier: VERIFIER, redirect_uri: REDIRECT, client_id: clientId }
    const first = (await (await exchange(harness, fields)).json()) as Record<string, string>
    expect((await mcp(harness, first.access_token)).status).toBe(200)
    await expectError(await exchange(harness, fields), 400, 'invalid_grant')
    const after = await mcp(harness, first.access_token)
    expect(after.status).toBe(401)
    expect(after.headers.get('www-authenticate')).toContain('revoked')
    const refreshed = await harness.request(
      '/token',
      form({
        grant_type: 'refresh_token',
        refresh_token: first.refresh_token,
        client_id: clientId,
      }),
    )
    await expectError(refreshed, 400, 'invalid_grant')
  })

  it('refuses a code bound to another client', async () => {
    const harness = createHarness()
    const { code } = await issueCode(harness)
    const other = await registerClient(harness)
    await expectError(
      await exchange(harness, {
        code,
        code_verifier: VERIFIER,
        redirect_uri: REDIRECT,
        client_id: other.client_id,
      }),
      400,
      'invalid_grant',
    )
  })

  it('refuses another redirect URI', async () => {
    const harness = createHarness()
    const { code, clientId } = await issueCode(harness)
    await expectError(
      await exchange(harness, {
        code,
        code_verifier: VERIFIER,
        redirect_uri: 'http://127.0.0.1:9999/other',
        client_id: clientId,
      }),
      400,
      'invalid_grant',
    )
  })

  it('refuses an expired code (60 s)', async () => {
    const harness = createHarness()
    const { code, clientId } = await issueCode(harness)
    harness.clock?.advance(60_001)
    await expectError(
      await exchange(harness, {
        code,
        code_verifier: VERIFIER,
        redirect_uri: REDIRECT,
        client_id: clientId,
      }),
      400,
      'invalid_grant',
    )
  })

  it('refuses an unknown client with invalid_client 401', async () => {
    const harness = createHarness()
    const { code } = await issueCode(harness)
    await expectError(
      await exchange(harness, {
        code,
        code_verifier: VERIFIER,
        redirect_uri: REDIRECT,
        client_id: 'nobody',
      }),
      401,
      'invalid_client',
    )
  })

  it('refuses missing parameters, repeats, JSON bodies and unknown grant types', async () => {
    const harness = createHarness()
    const { code, clientId } = await issueCode(harness)
    await expectError(
      await exchange(harness, { code, redirect_uri: REDIRECT, client_id: clientId }),
      400,
      'invalid_request',
    )
    await expectError(
      await exchange(harness, {
        code: [code, code],
        code_verifier: VERIFIER,
        redirect_uri: REDIRECT,
        client_id: clientId,
      }),
      400,
      'invalid_request',
    )
    const json = await harness.request('/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', code }),
    })
    await expectError(json, 400, 'invalid_request')
    await expectError(
      await harness.request('/token', form({ grant_type: 'password', client_id: clientId })),
      400,
      'unsupported_grant_type',
    )
    // The code survived all of that.
    expect(
      (
        await exchange(harness, {
          code,
          code_verifier: VERIFIER,
          redirect_uri: REDIRECT,
          client_id: clientId,
        })
      ).status,
    ).toBe(200)
  })

  it('binds the resource: repeating it works, another one is invalid_target', async () => {
    const harness = createHarness()
    const bound = await issueCode(harness, { resource: 'http://127.0.0.1:3000/mcp' })
    const base = {
      code: bound.code,
      code_verifier: VERIFIER,
      redirect_uri: REDIRECT,
      client_id: bound.clientId,
    }
    await expectError(
      await exchange(harness, { ...base, resource: 'https://other.example/mcp' }),
      400,
      'invalid_target',
    )
    const ok = await exchange(harness, { ...base, resource: 'http://127.0.0.1:3000/mcp' })
    expect(ok.status).toBe(200)
    const claims = decodeJwt(String(((await ok.json()) as { access_token: string }).access_token))
    expect(claims.aud).toBe('http://127.0.0.1:3000/mcp')
  })
})

describe('POST /token: refresh', () => {
  async function grant(harness: Harness) {
    const { clientId, tokens } = await codeGrant(harness)
    return {
      clientId,
      refreshToken: String(tokens.refresh_token),
      accessToken: String(tokens.access_token),
    }
  }

  function refresh(harness: Harness, fields: Record<string, string>) {
    return harness.request('/token', form({ grant_type: 'refresh_token', ...fields }))
  }

  it('rotates: a new access and refresh token, same user, tenant and audience', async () => {
    const harness = createHarness()
    const { clientId, refreshToken } = await grant(harness)
    const res = await refresh(harness, { refresh_token: refreshToken, client_id: clientId })
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const body = (await res.json()) as Record<string, string>
    expect(body.refresh_token).not.toBe(refreshToken)
    expect(decodeJwt(body.access_token ?? '')).toMatchObject({
      sub: 'alice',
      tenant_id: 'tenant-a',
      aud: 'http://127.0.0.1:3000/mcp',
    })
  })

  it('revokes the family when a rotated token is reused', async () => {
    const harness = createHarness()
    const { clientId, refreshToken } = await grant(harness)
    const next = (await (
      await refresh(harness, { refresh_token: refreshToken, client_id: clientId })
    ).json()) as Record<string, string>
    expect((await mcp(harness, next.access_token)).status).toBe(200)
    await expectError(
      await refresh(harness, { refresh_token: refreshToken, client_id: clientId }),
      400,
      'invalid_grant',
    )
    // The newest refresh token of the family and its access token die with it.
    await expectError(
      await refresh(harness, { refresh_token: next.refresh_token ?? '', client_id: clientId }),
      400,
      'invalid_grant',
    )
    expect((await mcp(harness, next.access_token)).status).toBe(401)
  })

  it('refuses a refresh by another client without rotating', async () => {
    const harness = createHarness()
    const { clientId, refreshToken } = await grant(harness)
    const other = await registerClient(harness)
    await expectError(
      await refresh(harness, { refresh_token: refreshToken, client_id: other.client_id }),
      400,
      'invalid_grant',
    )
    expect(
      (await refresh(harness, { refresh_token: refreshToken, client_id: clientId })).status,
    ).toBe(200)
  })

  it('refuses a wider scope', async () => {
    const harness = createHarness()
    const { clientId, refreshToken } = await grant(harness)
    await expectError(
      await refresh(harness, {
        refresh_token: refreshToken,
        client_id: clientId,
        scope: 'mcp:read admin',
      }),
      400,
      'invalid_scope',
    )
    const narrowed = await refresh(harness, {
      refresh_token: refreshToken,
      client_id: clientId,
      scope: 'mcp:read',
    })
    expect(narrowed.status).toBe(200)
    expect(((await narrowed.json()) as { scope: string }).scope).toBe('mcp:read')
  })

  it('refuses another resource', async () => {
    const harness = createHarness()
    const { clientId, refreshToken } = await grant(harness)
    await expectError(
      await refresh(harness, {
        refresh_token: refreshToken,
        client_id: clientId,
        resource: 'https://other.example/mcp',
      }),
      400,
      'invalid_target',
    )
  })

  it('refuses an unknown refresh token', async () => {
    const harness = createHarness()
    const { clientId } = await grant(harness)
    await expectError(
      await refresh(harness, { refresh_token: 'nope', client_id: clientId }),
      400,
      'invalid_grant',
    )
  })

  it('issues no refresh token to clients that did not register refresh_token', async () => {
    const harness = createHarness()
    const client = await registerClient(harness, { grant_types: ['authorization_code'] })
    const cookie = harness.sessions.login('alice')
    const location = await approve(harness, cookie, {
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
    })
    const res = await exchange(harness, {
      code: location.searchParams.get('code') ?? '',
      code_verifier: VERIFIER,
      redirect_uri: REDIRECT,
      client_id: client.client_id,
    })
    const body = (await res.json()) as Record<string, unknown>
    expect(body.access_token).toBeTruthy()
    expect('refresh_token' in body).toBe(false)
  })
})

describe('tenant isolation', () => {
  it('binds each token to the tenant of the session that approved it', async () => {
    const harness = createHarness()
    const alice = await codeGrant(harness, 'alice')
    const bob = await codeGrant(harness, 'bob')
    const a = decodeJwt(String(alice.tokens.access_token))
    const b = decodeJwt(String(bob.tokens.access_token))
    expect([a.sub, a.tenant_id]).toEqual(['alice', 'tenant-a'])
    expect([b.sub, b.tenant_id]).toEqual(['bob', 'tenant-b'])
    const res = await mcp(harness, bob.tokens.access_token)
    expect(((await res.json()) as { tenant_id: string }).tenant_id).toBe('tenant-b')
  })
})
