import { describe, expect, it } from 'vitest'
import { createHarness } from './support.ts'

describe('discovery', () => {
  it('serves the spec fields plus RFC 9207 iss, RFC 7009 revocation and refresh_token', async () => {
    const harness = createHarness()
    const res = await harness.request('/.well-known/oauth-authorization-server')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      issuer: 'http://127.0.0.1:3000',
      authorization_endpoint: 'http://127.0.0.1:3000/authorize',
      token_endpoint: 'http://127.0.0.1:3000/token',
      registration_endpoint: 'http://127.0.0.1:3000/register',
      revocation_endpoint: 'http://127.0.0.1:3000/revoke',
      revocation_endpoint_auth_methods_supported: ['none'],
      device_authorization_endpoint: 'http://127.0.0.1:3000/device_authorization',
      response_types_supported: ['code'],
      // The two grants of the spec, and refresh_token: /token issues and accepts refresh tokens.
      grant_types_supported: [
        'authorization_code',
        'urn:ietf:params:oauth:grant-type:device_code',
        'refresh_token',
      ],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      scopes_supported: ['mcp:read', 'mcp:write'],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
    })
  })

  it('normalizes the issuer from APP_URL with a trailing slash', async () => {
    const harness = createHarness({ issuer: 'https://app.example.com/' })
    const body = (await (
      await harness.app.request('https://app.example.com/.well-known/oauth-authorization-server')
    ).json()) as { issuer: string }
    expect(body.issuer).toBe('https://app.example.com')
  })

  it('serves protected-resource metadata at both RFC 9728 locations', async () => {
    const harness = createHarness()
    const expected = {
      resource: 'http://127.0.0.1:3000/mcp',
      authorization_servers: ['http://127.0.0.1:3000'],
      scopes_supported: ['mcp:read', 'mcp:write'],
      bearer_methods_supported: ['header'],
    }
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
    ]) {
      const res = await harness.request(path)
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual(expected)
    }
  })

  it('says false for client ID metadata documents when they are turned off', async () => {
    const harness = createHarness({ clientIdMetadataDocuments: { enabled: false } })
    const body = (await (
      await harness.request('/.well-known/oauth-authorization-server')
    ).json()) as Record<string, unknown>
    expect(body.client_id_metadata_document_supported).toBe(false)
  })
})

describe('CORS', () => {
  const preflight = (method = 'POST') =>
    ({
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:6274',
        'access-control-request-method': method,
        'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
      },
    }) as RequestInit

  it('answers preflights on discovery, /register, /token, /device_authorization and /mcp', async () => {
    const harness = createHarness()
    for (const [path, method] of [
      ['/.well-known/oauth-authorization-server', 'GET'],
      ['/.well-known/oauth-protected-resource', 'GET'],
      ['/.well-known/oauth-protected-resource/mcp', 'GET'],
      ['/register', 'POST'],
      ['/token', 'POST'],
      ['/device_authorization', 'POST'],
      ['/mcp', 'POST'],
    ] as const) {
      const res = await harness.request(path, preflight(method))
      expect(res.status, path).toBe(204)
      expect(res.headers.get('access-control-allow-origin')).toBe('*')
      const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase()
      for (const header of ['authorization', 'content-type', 'mcp-protocol-version']) {
        expect(allowed).toContain(header)
      }
    }
  })

  it('answers OPTIONS /mcp before auth, and exposes WWW-Authenticate', async () => {
    const harness = createHarness()
    const res = await harness.request('/mcp', {
      method: 'POST',
      headers: { origin: 'http://localhost:6274' },
    })
    expect(res.status).toBe(401)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate')
    expect(res.headers.get('www-authenticate')).toBe(
      'Bearer resource_metadata="http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp"',
    )
  })

  it('adds CORS headers to token responses, errors included', async () => {
    const harness = createHarness()
    const res = await harness.request('/token', {
      method: 'POST',
      headers: {
        origin: 'http://localhost:6274',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=authorization_code',
    })
    expect(res.status).toBe(400)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
  })
})
