import { inspect } from 'node:util'
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import {
  constantTimeEqual,
  digestsEqual,
  escapeHtml,
  Secret,
  securityHeaders,
  securityHeaderValues,
} from '../../../src/core/index.ts'
import { isPlainJson } from '../../../src/core/queue/index.ts'

describe('constantTimeEqual', () => {
  it('compares strings and bytes of any length', () => {
    expect(constantTimeEqual('token', 'token')).toBe(true)
    expect(constantTimeEqual('token', 'token2')).toBe(false)
    expect(constantTimeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2]))).toBe(true)
    expect(constantTimeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 3]))).toBe(false)
  })

  it('never matches an empty value', () => {
    expect(constantTimeEqual('', '')).toBe(false)
    expect(constantTimeEqual('', 'x')).toBe(false)
  })
})

describe('digestsEqual', () => {
  it('compares digests of a public length, and nothing else', () => {
    const digest = new Uint8Array(32).fill(7)
    expect(digestsEqual(digest, new Uint8Array(32).fill(7))).toBe(true)
    expect(digestsEqual(digest, new Uint8Array(32).fill(8))).toBe(false)
    expect(digestsEqual(digest, new Uint8Array(31).fill(7))).toBe(false)
    expect(digestsEqual(new Uint8Array(0), new Uint8Array(0))).toBe(false)
  })
})

describe('isPlainJson (what a queue may store without a JSON round trip)', () => {
  it('accepts what JSON gives back unchanged', () => {
    expect(
      isPlainJson({ payload_json: '{"a":1}', n: 1, ok: true, none: null, list: [1, 'x'] }),
    ).toBe(true)
  })

  it('refuses what a round trip would change', () => {
    expect(isPlainJson({ at: new Date() })).toBe(false)
    expect(isPlainJson({ missing: undefined })).toBe(false)
    expect(isPlainJson({ n: Number.NaN })).toBe(false)
    expect(isPlainJson({ big: 1n })).toBe(false)
    expect(isPlainJson(new Map())).toBe(false)
    expect(isPlainJson({ toJSON: () => 'x' })).toBe(false)
  })
})

describe('escapeHtml', () => {
  it('escapes the five characters that end text or attributes', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    )
  })
})

describe('Secret', () => {
  const secret = new Secret('s3cr3t-value')

  it('prints as <redacted> in every way a value can be printed', () => {
    expect(String(secret)).toBe('<redacted>')
    expect(`${secret}`).toBe('<redacted>')
    expect(JSON.stringify({ secret })).toBe('{"secret":"<redacted>"}')
    expect(inspect({ secret })).not.toContain('s3cr3t')
  })

  it('is read with reveal() and compared in constant time with equals()', () => {
    expect(secret.reveal()).toBe('s3cr3t-value')
    expect(secret.equals('s3cr3t-value')).toBe(true)
    expect(secret.equals(new Secret('s3cr3t-value'))).toBe(true)
    expect(secret.equals('other')).toBe(false)
    expect(Secret.from(secret)).toBe(secret)
    expect(Secret.from('x').reveal()).toBe('x')
  })
})

describe('securityHeaders', () => {
  it('gives pages no framing, no sniffing, no referrer, no caching and a closed CSP', () => {
    const headers = securityHeaderValues()
    expect(headers).toMatchObject({
      'X-Frame-Options': 'DENY',
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': 'no-store',
    })
    expect(headers['Content-Security-Policy']).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; frame-ancestors 'none'",
    )
  })

  it('takes extra CSP directives and another Cache-Control', () => {
    const headers = securityHeaderValues({
      csp: { 'form-action': "'self'", 'img-src': "'self' data:" },
      cacheControl: false,
    })
    expect(headers['Content-Security-Policy']).toContain("img-src 'self' data:")
    expect(headers['Content-Security-Policy']).toContain("form-action 'self'")
    expect(headers['Cache-Control']).toBeUndefined()
  })

  it('as middleware, sets them on responses without overriding what a handler chose', async () => {
    const app = new Hono()
    app.use(securityHeaders())
    app.get('/', (c) => c.html('<p>hi</p>'))
    app.get('/cached', (c) => c.html('<p>hi</p>', 200, { 'Cache-Control': 'max-age=60' }))
    const page = await app.request('/')
    expect(page.headers.get('X-Frame-Options')).toBe('DENY')
    expect(page.headers.get('Cache-Control')).toBe('no-store')
    expect((await app.request('/cached')).headers.get('Cache-Control')).toBe('max-age=60')
  })
})
