import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isAllowedAddress } from '../../src/oauth/cimd/address-policy.ts'
import { cacheSeconds, parseClientIdUrl } from '../../src/oauth/cimd/client-id-url.ts'
import { capturingLogger } from '../cdn/support/logger.ts'
import { documentRoute, serveClientSite } from './cimd-support.ts'
import { approve, authorizeQuery, CHALLENGE, createHarness, form, VERIFIER } from './support.ts'

type Site = Awaited<ReturnType<typeof serveClientSite>>

const clientFields =
  (path: string, extra: Record<string, unknown> = {}) =>
  (origin: string) => ({
    client_id: `${origin}${path}`,
    client_name: 'Document\u202E Client',
    redirect_uris: [`${origin}/callback`],
    grant_types: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_method: 'none',
    ...extra,
  })

let site: Site
beforeAll(async () => {
  site = await serveClientSite({
    '/client.json': documentRoute(clientFields('/client.json')),
    '/no-store.json': documentRoute(clientFields('/no-store.json'), {
      'cache-control': 'no-store',
    }),
    '/mismatch.json': documentRoute(clientFields('/other.json')),
    '/secret.json': documentRoute(clientFields('/secret.json', { client_secret: 'x' })),
    '/big.json': documentRoute(clientFields('/big.json', { client_uri: 'x'.repeat(6000) })),
    '/elsewhere.json': (_req, res) => {
      res.writeHead(302, { location: 'http://localhost:1/client.json' }).end()
    },
  })
})
afterAll(async () => site?.close())

const devFlag = { clientIdMetadataDocuments: { allowLoopback: true } }

function authorize(harness: ReturnType<typeof createHarness>, clientId: string, cookie: string) {
  return harness.request(
    authorizeQuery({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: `${site.origin}/callback`,
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
    }),
    { headers: { cookie } },
  )
}

describe('client ID metadata documents', () => {
  it('runs the code flow for a document client and shows its verified host', async () => {
    const harness = createHarness(devFlag)
    const clientId = `${site.origin}/client.json`
    const cookie = harness.sessions.login('alice')
    const page = await authorize(harness, clientId, cookie)
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain(`<strong id="verified-host">${new URL(site.origin).host}</strong>`)
    expect(html).toContain('Document Client')
    const location = await approve(harness, cookie, {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: `${site.origin}/callback`,
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
    })
    const res = await harness.request(
      '/token',
      form({
        grant_type: 'authorization_code',
        code: location.searchParams.get('code') ?? '',
        code_verifier: VERIFIER,
        redirect_uri: `${site.origin}/callback`,
        client_id: clientId,
      }),
    )
    expect(res.status).toBe(200)
    const { access_token } = (await res.json()) as { access_token: string }
    const mcp = await harness.request('/mcp', {
      method: 'POST',
      headers: { authorization: `Bearer ${access_token}` },
    })
    expect(mcp.status).toBe(200)
    expect(((await mcp.json()) as { client_id: string }).client_id).toBe(clientId)
  })

  it('caches the document for its max-age, and not at all with no-store', async () => {
    const harness = createHarness(devFlag)
    const cookie = harness.sessions.login('alice')
    const before = { ...site.fetches }
    for (let i = 0; i < 3; i++) {
      await authorize(harness, `${site.origin}/client.json`, cookie)
      await authorize(harness, `${site.origin}/no-store.json`, cookie)
    }
    expect((site.fetches['/client.json'] ?? 0) - (before['/client.json'] ?? 0)).toBe(1)
    expect((site.fetches['/no-store.json'] ?? 0) - (before['/no-store.json'] ?? 0)).toBe(3)
  })

  it.each([
    ['a client_id that differs from the URL', '/mismatch.json'],
    ['a document with a client_secret', '/secret.json'],
    ['a document over the size limit', '/big.json'],
    ['a redirect to another host', '/elsewhere.json'],
    ['a missing document', '/missing.json'],
  ])('refuses %s with an error page', async (_name, path) => {
    const harness = createHarness(devFlag)
    const res = await authorize(harness, `${site.origin}${path}`, harness.sessions.login('alice'))
    expect(res.status).toBe(400)
    expect(await res.text()).toContain('not registered')
  })

  it('refuses loopback documents without the development flag, without fetching them', async () => {
    const harness = createHarness()
    const before = site.fetches['/client.json'] ?? 0
    const res = await authorize(
      harness,
      `${site.origin}/client.json`,
      harness.sessions.login('alice'),
    )
    expect(res.status).toBe(400)
    expect(site.fetches['/client.json'] ?? 0).toBe(before)
  })

  it('logs why an http client_id URL is refused on its form', async () => {
    for (const [options, clientId, reason] of [
      [{}, 'http://app.example.com/client.json', 'must use https'],
      [{}, `${site.origin}/client.json`, 'allowLoopback'],
      [devFlag, 'http://app.example.com/client.json', 'must use https'],
    ] as const) {
      const { logger, lines } = capturingLogger()
      const harness = createHarness({ ...options, logger })
      const res = await authorize(harness, clientId, harness.sessions.login('alice'))
      expect(res.status).toBe(400)
      const refused = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
      expect(refused, clientId).toContainEqual(
        expect.objectContaining({
          level: 40,
          msg: 'oauth: client metadata refused',
          clientId,
          reason: expect.stringContaining(reason),
        }),
      )
    }
  })

  it('refuses names that resolve to loopback or private addresses (checked after DNS)', async () => {
    const harness = createHarness()
    for (const url of ['https://localhost:1/client.json', 'https://10.0.0.1/client.json']) {
      const res = await authorize(harness, url, harness.sessions.login('alice'))
      expect(res.status).toBe(400)
    }
  })
})

describe('CIMD building blocks', () => {
  it('accepts https URLs with a path, and http loopback only under the flag', () => {
    const accepted = (value: string, allowLoopback = false) =>
      parseClientIdUrl(value, allowLoopback).url?.href
    const refusal = (value: string, allowLoopback = false) =>
      parseClientIdUrl(value, allowLoopback).refused
    expect(accepted('https://app.example.com/oauth/client.json')).toBe(
      'https://app.example.com/oauth/client.json',
    )
    expect(accepted('http://127.0.0.1:8080/a', true)).toBe('http://127.0.0.1:8080/a')
    expect(refusal('https://app.example.com/')).toMatch(/needs a path/)
    expect(refusal('https://app.example.com/a#b')).toMatch(/fragment/)
    expect(refusal('https://user@app.example.com/a')).toMatch(/user information/)
    expect(refusal('https://app.example.com/a/../b')).toMatch(/normalized form/)
    expect(refusal('HTTPS://app.example.com/a')).toMatch(/normalized form/)
    expect(refusal('https://[::1/a')).toMatch(/not a valid URL/)
    expect(refusal(`https://app.example.com/${'a'.repeat(2000)}`)).toMatch(/longer than 2000/)
    expect(refusal('http://app.example.com/a', true)).toMatch(/must use https/)
    expect(refusal('http://127.0.0.1:8080/a')).toMatch(/needs allowLoopback/)
  })

  it('blocks private, loopback, link-local and mapped addresses', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::ffff:127.0.0.1',
      'fe80::1',
      'fd00::1',
      'not-an-ip',
    ]) {
      expect(isAllowedAddress(address, false), address).toBe(false)
    }
    expect(isAllowedAddress('93.184.216.34', false)).toBe(true)
    expect(isAllowedAddress('2606:4700::1111', false)).toBe(true)
    expect(isAllowedAddress('127.0.0.1', true)).toBe(true)
    expect(isAllowedAddress('10.1.2.3', true)).toBe(false)
  })

  it('blocks IPv4-compatible, IPv4-translated, Teredo, site-local and NAT64 local-use IPv6, even with allowLoopback', () => {
    for (const address of [
      '::7f00:1', // ::127.0.0.1, IPv4-compatible (::/96)
      '::a00:1',
      '::808:808',
      'fec0::1', // site-local (fec0::/10)
      'feff:ffff::1',
      '64:ff9b:1::7f00:1', // NAT64 local-use (64:ff9b:1::/48)
      '64:ff9b:1:ffff::1',
      '::ffff:0:7f00:1', // ::ffff:0:127.0.0.1, IPv4-translated (::ffff:0:0:0/96)
      '::ffff:0:808:808',
      '2001:0:4136:e378:8000:63bf:3fff:fdd2', // Teredo (2001::/32)
      '2001::1',
    ]) {
      expect(isAllowedAddress(address, false), address).toBe(false)
      expect(isAllowedAddress(address, true), address).toBe(false)
    }
    expect(isAllowedAddress('2001:4860:4860::8888', false)).toBe(true)
    expect(isAllowedAddress('2001:1::1', false)).toBe(true)
    expect(isAllowedAddress('64:ff9b:2::1', false)).toBe(true)
  })

  it('reads Cache-Control within bounds', () => {
    const bounds = { defaultSeconds: 300, maxSeconds: 86400 }
    expect(cacheSeconds(null, bounds)).toBe(300)
    expect(cacheSeconds('public, max-age=60', bounds)).toBe(60)
    expect(cacheSeconds('max-age=99999999', bounds)).toBe(86400)
    expect(cacheSeconds('no-store', bounds)).toBe(0)
    expect(cacheSeconds('max-age=abc', bounds)).toBe(0)
  })
})
