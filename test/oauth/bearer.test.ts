import { Hono } from 'hono'
import { base64url, SignJWT, UnsecuredJWT } from 'jose'
import { describe, expect, it } from 'vitest'
import { ManualClock, MemoryKeyValueStore } from '../../src/core/index.ts'
import {
  type AccessTokenClaims,
  bearerAuth,
  createBearerValidator,
  getAccessToken,
} from '../../src/oauth/index.ts'
import { signAccessToken } from '../../src/oauth/protocol/access-token.ts'
import { TokenFamilies } from '../../src/oauth/store/token-families.ts'

const secret = 'a-test-secret-that-is-long-enough-000000'
const issuer = 'http://127.0.0.1:3000'
const resource = 'http://127.0.0.1:3000/mcp'
const metadataUrl = 'http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp'
const key = new TextEncoder().encode(secret)

function claims(clock: ManualClock, extra: Partial<AccessTokenClaims> = {}): AccessTokenClaims {
  const iat = Math.floor(clock.now() / 1000)
  return {
    sub: 'user-1',
    tenant_id: 'tenant-a',
    client_id: 'client-1',
    scope: 'mcp',
    aud: resource,
    iss: issuer,
    iat,
    exp: iat + 3600,
    jti: 'jti-1',
    grant_id: 'grant-1',
    ...extra,
  }
}

function request(authorization?: string, url = 'http://127.0.0.1:3000/mcp'): Request {
  return new Request(url, authorization ? { headers: { authorization } } : {})
}

describe('createBearerValidator', () => {
  const clock = new ManualClock()
  const validate = createBearerValidator({ secret, issuer, resource, clock })

  it('accepts a token it minted and returns the claims', async () => {
    const token = await signAccessToken(claims(clock), key)
    const result = await validate(request(`Bearer ${token}`))
    expect(result).toEqual({ kind: 'valid', claims: claims(clock) })
  })

  it('omits tenant_id for single-tenant tokens', async () => {
    const { tenant_id: _, ...single } = claims(clock)
    const token = await signAccessToken(single, key)
    const result = await validate(request(`Bearer ${token}`))
    expect(result.kind).toBe('valid')
    if (result.kind === 'valid') expect('tenant_id' in result.claims).toBe(false)
  })

  it('accepts the scheme case-insensitively', async () => {
    const token = await signAccessToken(claims(clock), key)
    expect((await validate(request(`bearer ${token}`))).kind).toBe('valid')
  })

  it('reports a missing header, another scheme and a query-string token as missing', async () => {
    const token = await signAccessToken(claims(clock), key)
    expect(await validate(request())).toEqual({ kind: 'missing' })
    expect(await validate(request('Basic dXNlcjpwYXNz'))).toEqual({ kind: 'missing' })
    expect(await validate(request(undefined, `${resource}?access_token=${token}`))).toEqual({
      kind: 'missing',
    })
  })

  it('rejects an empty bearer value', async () => {
    expect((await validate(request('Bearer '))).kind).toBe('invalid')
  })

  it('rejects a tampered payload', async () => {
    const token = await signAccessToken(claims(clock), key)
    const [header, , signature] = token.split('.')
    const forged = base64url.encode(JSON.stringify({ ...claims(clock), sub: 'admin' }))
    const result = await validate(request(`Bearer ${header}.${forged}.${signature}`))
    expect(result).toEqual({ kind: 'invalid', reason: 'The token signature is invalid' })
  })

  it('rejects a token signed with another key', async () => {
    const token = await signAccessToken(
      claims(clock),
      new TextEncoder().encode('another-secret-of-sufficient-length-1111'),
    )
    expect(await validate(request(`Bearer ${token}`))).toEqual({
      kind: 'invalid',
      reason: 'The token signature is invalid',
    })
  })

  it('rejects alg none', async () => {
    const unsecured = new UnsecuredJWT({ ...claims(clock) }).encode()
    const result = await validate(request(`Bearer ${unsecured}`))
    expect(result.kind).toBe('invalid')
    // And with an at+jwt typ header added by hand.
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'at+jwt' }))
    const body = base64url.encode(JSON.stringify(claims(clock)))
    expect((await validate(request(`Bearer ${header}.${body}.`))).kind).toBe('invalid')
  })

  it('rejects another HMAC algorithm (alg pinned to HS256)', async () => {
    const token = await new SignJWT({ client_id: 'client-1', scope: 'mcp' })
      .setProtectedHeader({ alg: 'HS512', typ: 'at+jwt' })
      .setIssuer(issuer)
      .setAudience(resource)
      .setSubject('user-1')
      .setIssuedAt()
      .setExpirationTime('1h')
      .setJti('x')
      .sign(key)
    expect(await validate(request(`Bearer ${token}`))).toEqual({
      kind: 'invalid',
      reason: 'The token algorithm is not allowed',
    })
  })

  it('rejects an expired token', async () => {
    const expiring = new ManualClock()
    const check = createBearerValidator({ secret, issuer, resource, clock: expiring })
    const token = await signAccessToken(claims(expiring), key)
    expiring.advance(3600_000)
    expect(await check(request(`Bearer ${token}`))).toEqual({
      kind: 'invalid',
      reason: 'The token has expired',
    })
  })

  it('refuses a token it accepted before once the token has expired', async () => {
    const expiring = new ManualClock()
    const check = createBearerValidator({ secret, issuer, resource, clock: expiring })
    const token = await signAccessToken(claims(expiring), key)
    expect((await check(request(`Bearer ${token}`))).kind).toBe('valid')
    expect((await check(request(`Bearer ${token}`))).kind).toBe('valid')
    expiring.advance(3600_000)
    expect(await check(request(`Bearer ${token}`))).toEqual({
      kind: 'invalid',
      reason: 'The token has expired',
    })
  })

  it('rejects a wrong issuer', async () => {
    const token = await signAccessToken(claims(clock, { iss: 'http://evil.test' }), key)
    expect(await validate(request(`Bearer ${token}`))).toEqual({
      kind: 'invalid',
      reason: 'The token was issued by another issuer',
    })
  })

  it('rejects a wrong audience', async () => {
    const token = await signAccessToken(claims(clock, { aud: 'http://127.0.0.1:3000/other' }), key)
    expect(await validate(request(`Bearer ${token}`))).toEqual({
      kind: 'invalid',
      reason: 'The token is for another resource',
    })
  })

  it('rejects a JWT that is not an access token (typ)', async () => {
    const token = await new SignJWT({ client_id: 'c', scope: 'mcp' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(issuer)
      .setAudience(resource)
      .setSubject('user-1')
      .setIssuedAt()
      .setExpirationTime('1h')
      .setJti('x')
      .sign(key)
    expect(await validate(request(`Bearer ${token}`))).toEqual({
      kind: 'invalid',
      reason: 'The token is not an access token',
    })
  })

  it('rejects garbage', async () => {
    expect(await validate(request('Bearer not.a.jwt'))).toEqual({
      kind: 'invalid',
      reason: 'The token is malformed',
    })
  })

  it('refuses revoked tokens when given the store', async () => {
    const store = new MemoryKeyValueStore({ clock })
    const check = createBearerValidator({ secret, issuer, resource, clock, store })
    const token = await signAccessToken(claims(clock, { grant_id: 'revoke-me' }), key)
    expect((await check(request(`Bearer ${token}`))).kind).toBe('valid')
    await new TokenFamilies(store, clock, () => new Uint8Array(16)).revoke('revoke-me')
    expect(await check(request(`Bearer ${token}`))).toEqual({
      kind: 'invalid',
      reason: 'The token has been revoked',
    })
  })

  it('fails at start-up without a secret', () => {
    expect(() => createBearerValidator({ secret: '', issuer, resource })).toThrow(TypeError)
  })
})

describe('bearerAuth', () => {
  const clock = new ManualClock()
  const validator = createBearerValidator({ secret, issuer, resource, clock })
  const app = new Hono()
  app.use('/mcp', bearerAuth({ validator, resourceMetadataUrl: metadataUrl }))
  app.post('/mcp', (c) => c.json(getAccessToken(c)))
  app.use('/admin', bearerAuth({ validator, resourceMetadataUrl: metadataUrl, scopes: ['admin'] }))
  app.post('/admin', (c) => c.json({ ok: true }))

  it('answers 401 without error= when the token is missing', async () => {
    const res = await app.request('/mcp', { method: 'POST' })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl}"`)
    expect(await res.json()).toEqual({ error: 'Unauthenticated', code: 'unauthenticated' })
  })

  it('answers 401 invalid_token with the reason', async () => {
    const res = await app.request('/mcp', {
      method: 'POST',
      headers: { authorization: 'Bearer x.y.z' },
    })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${metadataUrl}", error="invalid_token", error_description="The token is malformed"`,
    )
    expect(await res.json()).toEqual({
      error: 'invalid_token',
      error_description: 'The token is malformed',
    })
  })

  it('passes valid tokens and exposes the claims', async () => {
    const token = await signAccessToken(claims(clock), key)
    const res = await app.request('/mcp', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual(claims(clock))
  })

  it('answers 403 insufficient_scope with scope and resource_metadata', async () => {
    const token = await signAccessToken(claims(clock), key)
    const res = await app.request('/admin', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(res.status).toBe(403)
    const challenge = res.headers.get('www-authenticate') ?? ''
    expect(challenge).toContain(`resource_metadata="${metadataUrl}"`)
    expect(challenge).toContain('error="insufficient_scope"')
    expect(challenge).toContain('scope="admin"')
  })

  it('checks validity before scope', async () => {
    const res = await app.request('/admin', {
      method: 'POST',
      headers: { authorization: 'Bearer bad' },
    })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"')
  })

  it('names the required scope in the 401 challenge of a scoped route', async () => {
    const res = await app.request('/admin', { method: 'POST' })
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${metadataUrl}", scope="admin"`,
    )
    const invalid = await app.request('/admin', {
      method: 'POST',
      headers: { authorization: 'Bearer x.y.z' },
    })
    expect(invalid.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${metadataUrl}", error="invalid_token", error_description="The token is malformed", scope="admin"`,
    )
  })

  it('names challengeScopes in both 401 challenges without requiring them', async () => {
    const tools = new Hono()
    tools.use(
      '/tools',
      bearerAuth({
        validator,
        resourceMetadataUrl: metadataUrl,
        challengeScopes: ['mcp:read', 'mcp:write'],
      }),
    )
    tools.post('/tools', (c) => c.json({ ok: true }))
    const missing = await tools.request('/tools', { method: 'POST' })
    expect(missing.status).toBe(401)
    expect(missing.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${metadataUrl}", scope="mcp:read mcp:write"`,
    )
    const invalid = await tools.request('/tools', {
      method: 'POST',
      headers: { authorization: 'Bearer x.y.z' },
    })
    expect(invalid.status).toBe(401)
    expect(invalid.headers.get('www-authenticate')).toContain('scope="mcp:read mcp:write"')
    const token = await signAccessToken({ ...claims(clock), scope: 'mcp:read' }, key)
    const allowed = await tools.request('/tools', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(allowed.status).toBe(200)
  })
})
