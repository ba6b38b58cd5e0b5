import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { safeReturnTo } from '../../src/session/index.ts'
import { CookieJar, type DemoUnderTest, hiddenInput, signIn, startDemo } from './support.ts'

describe('demo login and sessions', () => {
  let demo: DemoUnderTest

  beforeAll(async () => {
    demo = await startDemo()
  })
  afterAll(async () => {
    await demo.close()
  })

  it('answers /health and the home page', async () => {
    const health = await demo.app.request('/health')
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({
      status: 'ok',
      dependencies: { database: 'up' },
      streams: 0,
    })
    const home = await demo.app.request('/')
    expect(home.status).toBe(200)
    expect(await home.text()).toContain('Sign in')
  })

  it('serves a login form with email and password inputs and anti-framing headers', async () => {
    const response = await demo.app.request('/login')
    expect(response.status).toBe(200)
    expect(response.headers.get('x-frame-options')).toBe('DENY')
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    const html = await response.text()
    expect(html).toContain('name="email"')
    expect(html).toContain('name="password"')
  })

  it('signs the demo user in and returns to a relative path', async () => {
    const jar = await signIn(
      demo.app,
      'demo@example.com',
      'correct horse battery',
      '/somewhere?x=1',
    )
    const home = await demo.app.request('/', { headers: { cookie: jar.header() } })
    expect(await home.text()).toContain('Signed in')
  })

  it('refuses a wrong password with 401 and sets no session', async () => {
    const jar = new CookieJar()
    const page = await demo.app.request('/login')
    jar.store(page)
    const response = await demo.app.request('/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
      body: new URLSearchParams({
        email: 'demo@example.com',
        password: 'wrong',
        csrf_token: hiddenInput(await page.text(), 'csrf_token'),
      }).toString(),
    })
    expect(response.status).toBe(401)
    expect(response.headers.getSetCookie().some((c) => c.startsWith('kiln_session='))).toBe(false)
    expect(await response.text()).toContain('Invalid email or password')
  })

  it('refuses a login post without the form token', async () => {
    const response = await demo.app.request('/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        email: 'demo@example.com',
        password: 'correct horse battery',
      }).toString(),
    })
    expect(response.status).toBe(400)
  })

  it('signs out only with the session CSRF token', async () => {
    const jar = await signIn(demo.app, 'demo@example.com', 'correct horse battery')
    const forged = await demo.app.request('/logout', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
      body: 'csrf_token=forged',
    })
    jar.store(forged)
    const stillIn = await demo.app.request('/', { headers: { cookie: jar.header() } })
    const html = await stillIn.text()
    expect(html).toContain('Signed in')
    const out = await demo.app.request('/logout', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
      body: new URLSearchParams({ csrf_token: hiddenInput(html, 'csrf_token') }).toString(),
    })
    jar.store(out)
    const after = await demo.app.request('/', { headers: { cookie: jar.header() } })
    expect(await after.text()).not.toContain('Signed in')
  })

  it.each([
    ['/posts', '/posts'],
    ['//evil.example', '/'],
    ['/\\evil.example', '/'],
    ['https://evil.example', '/'],
    ['javascript:alert(1)', '/'],
    ['', '/'],
  ])('return_to %s → %s', (input, expected) => {
    expect(safeReturnTo(input) ?? '/').toBe(expected)
  })
})
