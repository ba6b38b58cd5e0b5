import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { errorHandler, originGuard, silentLogger } from '../../../src/core/index.ts'

function appFor(options: Parameters<typeof originGuard>[0]) {
  const app = new Hono()
  app.onError(errorHandler({ logger: silentLogger() }))
  app.use('/mcp', originGuard(options))
  app.post('/mcp', (c) => c.json({ ok: true }))
  return app
}

const call = (app: Hono, headers: Record<string, string>) =>
  app.request('http://app.example.com/mcp', { method: 'POST', headers })

describe('originGuard', () => {
  const app = appFor({ appUrl: 'https://app.example.com' })

  it('lets requests without Origin through (native MCP clients, curl)', async () => {
    expect((await call(app, {})).status).toBe(200)
    expect((await call(app, { host: 'app.example.com' })).status).toBe(200)
  })

  it("lets the app's own origin through", async () => {
    const response = await call(app, { origin: 'https://app.example.com', host: 'app.example.com' })
    expect(response.status).toBe(200)
  })

  it('answers 403 to another origin, including null', async () => {
    for (const origin of ['https://evil.example', 'null', 'http://app.example.com']) {
      const response = await call(app, { origin })
      expect(response.status).toBe(403)
      expect(await response.json()).toEqual({ error: 'Origin not allowed', code: 'forbidden' })
    }
  })

  it('answers 403 to a rebinding Host (a page on another name resolving to this server)', async () => {
    const response = await call(app, { host: 'attacker.example:3000' })
    expect(response.status).toBe(403)
    expect(await response.json()).toEqual({ error: 'Host not allowed', code: 'forbidden' })
  })

  it('with a loopback APP_URL, allows its loopback aliases on the same port only', async () => {
    const local = appFor({ appUrl: 'http://localhost:3000' })
    expect((await call(local, { host: '127.0.0.1:3000' })).status).toBe(200)
    expect((await call(local, { origin: 'http://127.0.0.1:3000' })).status).toBe(200)
    expect((await call(local, { host: '127.0.0.1:4000' })).status).toBe(403)
    expect((await call(local, { origin: 'http://localhost:4000' })).status).toBe(403)
  })

  it('takes extra origins and hosts, or no Host check', async () => {
    const extra = appFor({
      appUrl: 'https://app.example.com',
      origins: ['https://admin.example.com'],
      hosts: ['internal:8080'],
    })
    expect((await call(extra, { origin: 'https://admin.example.com' })).status).toBe(200)
    expect((await call(extra, { host: 'internal:8080' })).status).toBe(200)
    const noHost = appFor({ appUrl: 'https://app.example.com', hosts: false })
    expect((await call(noHost, { host: 'anything' })).status).toBe(200)
  })

  it('refuses a post without Origin that Sec-Fetch-Site says another site sent', async () => {
    for (const site of ['same-site', 'cross-site']) {
      const response = await call(app, { 'sec-fetch-site': site })
      expect(response.status).toBe(403)
      expect(await response.json()).toEqual({ error: 'Origin not allowed', code: 'forbidden' })
    }
    for (const site of ['same-origin', 'none']) {
      expect((await call(app, { 'sec-fetch-site': site })).status).toBe(200)
    }
  })

  it('lets Origin: null through only from the same origin', async () => {
    expect((await call(app, { origin: 'null', 'sec-fetch-site': 'same-origin' })).status).toBe(200)
    expect((await call(app, { origin: 'null', 'sec-fetch-site': 'same-site' })).status).toBe(403)
  })

  it('an allowed Origin wins over Sec-Fetch-Site (an allowed sibling is same-site)', async () => {
    const extra = appFor({
      appUrl: 'https://app.example.com',
      origins: ['https://admin.example.com'],
    })
    const headers = { origin: 'https://admin.example.com', 'sec-fetch-site': 'same-site' }
    expect((await call(extra, headers)).status).toBe(200)
  })

  it('still follows links from other sites (GET navigations carry no Origin)', async () => {
    const pages = new Hono()
    pages.use('/authorize', originGuard({ appUrl: 'https://app.example.com' }))
    pages.get('/authorize', (c) => c.text('consent'))
    const response = await pages.request('https://app.example.com/authorize', {
      headers: { 'sec-fetch-site': 'cross-site' },
    })
    expect(response.status).toBe(200)
  })

  it('refuses a bad configuration when the factory runs', () => {
    expect(() => originGuard({ appUrl: 'not a url' })).toThrow(/APP_URL/)
    expect(() => originGuard({ appUrl: 'https://a.example', origins: ['nope'] })).toThrow(TypeError)
  })
})
