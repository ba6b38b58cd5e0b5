import { describe, expect, it } from 'vitest'
import { ConfigError, Secret } from '../../src/core/index.ts'
import { loadOAuthConfig, safeReturnTo } from '../../src/oauth/index.ts'
import { decidePoll } from '../../src/oauth/protocol/device-poll.ts'
import { s256Challenge, verifyCodeVerifier } from '../../src/oauth/protocol/pkce.ts'
import { matchesRedirectUri } from '../../src/oauth/protocol/redirect-uri.ts'
import { resolveResource } from '../../src/oauth/protocol/resource.ts'
import {
  generateUserCode,
  normalizeUserCode,
  USER_CODE_ALPHABET,
} from '../../src/oauth/protocol/user-code.ts'

describe('safeReturnTo', () => {
  it('keeps relative paths', () => {
    expect(safeReturnTo('/authorize?client_id=a&state=b')).toBe('/authorize?client_id=a&state=b')
    expect(safeReturnTo('/device')).toBe('/device')
  })
  it('rejects //host, /\\host, schemes and control characters', () => {
    for (const value of [
      '//evil.example',
      '/\\evil.example',
      '\\\\evil',
      'https://evil.example',
      'javascript:alert(1)',
      'evil',
      '/\t/evil.example',
      ' /x',
      '',
      undefined,
      null,
    ]) {
      expect(safeReturnTo(value), String(value)).toBeUndefined()
    }
  })
})

describe('redirect URI matching', () => {
  const registered = [
    'http://127.0.0.1/cb',
    'http://localhost:3000/cb',
    'https://app.example/cb',
    'cursor://x/cb',
  ]
  it('matches exactly', () => {
    expect(matchesRedirectUri('https://app.example/cb', registered)).toBe(true)
    expect(matchesRedirectUri('cursor://x/cb', registered)).toBe(true)
    expect(matchesRedirectUri('https://app.example/cb/', registered)).toBe(false)
    expect(matchesRedirectUri('https://APP.example/cb', registered)).toBe(false)
    expect(matchesRedirectUri('https://app.example:443/cb', registered)).toBe(false)
  })
  it('ignores only the port of http loopback URIs, and localhost is not 127.0.0.1', () => {
    expect(matchesRedirectUri('http://127.0.0.1:5555/cb', registered)).toBe(true)
    expect(matchesRedirectUri('http://localhost:5555/cb', registered)).toBe(true)
    expect(matchesRedirectUri('http://127.0.0.1:5555/cb2', registered)).toBe(false)
    expect(matchesRedirectUri('http://localhost:5555/cb', ['http://127.0.0.1/cb'])).toBe(false)
    expect(matchesRedirectUri('http://127.0.0.1:5555/cb', ['http://localhost/cb'])).toBe(false)
    expect(matchesRedirectUri('https://app.example:8443/cb', registered)).toBe(false)
  })
})

describe('resolveResource', () => {
  const canonical = 'https://app.example/mcp'
  it('defaults to the canonical URL and accepts it (with a tolerated trailing slash)', () => {
    expect(resolveResource([], canonical)).toBe(canonical)
    expect(resolveResource([canonical], canonical)).toBe(canonical)
    expect(resolveResource(['https://app.example/mcp/'], canonical)).toBe(canonical)
  })
  it('refuses foreign, relative and fragment resources', () => {
    for (const value of [
      'https://other.example/mcp',
      '/mcp',
      'mcp',
      'https://app.example/mcp#a',
      'https://app.example/',
      'urn:x',
    ]) {
      expect(resolveResource([value], canonical), value).toBeUndefined()
    }
    expect(resolveResource([canonical, 'https://other.example/mcp'], canonical)).toBeUndefined()
  })
})

describe('user codes', () => {
  it('are 8 letters of the consonant alphabet', () => {
    let seed = 0
    const random = (n: number) =>
      Uint8Array.from({ length: n }, () => (seed = (seed * 37 + 11) % 256))
    for (let i = 0; i < 50; i++) {
      const code = generateUserCode(random)
      expect(code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{8}$/)
    }
    expect(USER_CODE_ALPHABET).toBe('BCDFGHJKLMNPQRSTVWXZ')
  })
  it('normalize case-insensitively, with or without hyphen', () => {
    expect(normalizeUserCode('bcdf-ghjk')).toBe('BCDFGHJK')
    expect(normalizeUserCode('BCDFGHJK')).toBe('BCDFGHJK')
    expect(normalizeUserCode('bcdfghjk')).toBe('BCDFGHJK')
    expect(normalizeUserCode('ABCD-EFGH')).toBeUndefined()
    expect(normalizeUserCode('BCDF-GHJ')).toBeUndefined()
  })
})

describe('PKCE', () => {
  it('verifies the RFC 7636 appendix B example', () => {
    const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'
    expect(s256Challenge(verifier)).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')
    expect(verifyCodeVerifier(verifier, 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')).toBe(true)
    expect(verifyCodeVerifier(`${verifier}x`, 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')).toBe(
      false,
    )
    expect(verifyCodeVerifier('short', s256Challenge('short'))).toBe(false)
  })
})

describe('decidePoll', () => {
  const grant = {
    clientId: 'c',
    scope: ['mcp'],
    resource: 'r',
    userCode: 'BCDFGHJK',
    expiresAt: 600_000,
  }
  const base = {
    grant,
    decision: undefined,
    poll: undefined,
    clientId: 'c',
    now: 0,
    initialInterval: 5,
  }
  it('walks the spec table', () => {
    expect(decidePoll({ ...base, grant: undefined })).toEqual({ kind: 'expired' })
    expect(decidePoll({ ...base, now: 600_000 })).toEqual({ kind: 'expired' })
    expect(decidePoll({ ...base, clientId: 'other' })).toEqual({ kind: 'wrong_client' })
    expect(decidePoll(base)).toEqual({ kind: 'pending', poll: { lastPollAt: 0, interval: 5 } })
    expect(decidePoll({ ...base, poll: { lastPollAt: 0, interval: 5 }, now: 4_999 })).toEqual({
      kind: 'slow_down',
      poll: { lastPollAt: 4_999, interval: 10 },
    })
    expect(decidePoll({ ...base, decision: { status: 'denied' } }).kind).toBe('denied')
    expect(
      decidePoll({
        ...base,
        decision: { status: 'approved', userId: 'u', tenantId: 't', approvedAt: 1 },
      }),
    ).toEqual({
      kind: 'approved',
      userId: 'u',
      tenantId: 't',
      approvedAt: 1,
      // A decision without its own scope keeps the request's.
      scope: ['mcp'],
    })
    expect(
      decidePoll({
        ...base,
        decision: {
          status: 'approved',
          userId: 'u',
          tenantId: 't',
          approvedAt: 1,
          scope: [],
          grant: { posts: ['read'] },
        },
      }),
    ).toMatchObject({ kind: 'approved', scope: [], grant: { posts: ['read'] } })
  })
})

describe('loadOAuthConfig', () => {
  it('reads MCP_TOKEN_SECRET and APP_URL', () => {
    const config = loadOAuthConfig(
      { MCP_TOKEN_SECRET: 's'.repeat(32), APP_URL: 'https://app.example.com/' },
      { production: true },
    )
    expect(config.secret.reveal()).toBe('s'.repeat(32))
    expect(config).toEqual({
      secret: expect.any(Secret),
      issuer: 'https://app.example.com',
      secretGenerated: false,
    })
  })

  it('fails in production naming each missing variable', () => {
    try {
      loadOAuthConfig({}, { production: true })
      expect.unreachable()
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError)
      expect((error as ConfigError).problems).toEqual({
        MCP_TOKEN_SECRET: 'is required',
        APP_URL: 'is required',
      })
    }
  })

  it('refuses short secrets and APP_URLs with a path, without echoing values', () => {
    try {
      loadOAuthConfig(
        { MCP_TOKEN_SECRET: 'short-secret', APP_URL: 'https://x.example/app' },
        { production: true },
      )
      expect.unreachable()
    } catch (error) {
      expect(Object.keys((error as ConfigError).problems).sort()).toEqual([
        'APP_URL',
        'MCP_TOKEN_SECRET',
      ])
      expect((error as Error).message).not.toContain('short-secret')
    }
  })

  it('generates a secret in development and warns', () => {
    const warnings: string[] = []
    const config = loadOAuthConfig(
      {},
      { production: false, logger: { warn: (m: string) => warnings.push(m) } as never },
    )
    expect(config.secretGenerated).toBe(true)
    expect(config.secret.reveal().length).toBeGreaterThanOrEqual(32)
    expect(config.issuer).toBe('http://localhost:3000')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('MCP_TOKEN_SECRET')
  })
})
