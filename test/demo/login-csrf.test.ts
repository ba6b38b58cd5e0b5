import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CookieJar, type DemoUnderTest, hiddenInput, signIn, startDemo } from './support.ts'

const APP = 'https://app.example.com'
const FORM = 'application/x-www-form-urlencoded'

/** The login page's form token and the cookies it set. */
async function loginPage(demo: DemoUnderTest) {
  const jar = new CookieJar()
  const page = await demo.app.request(`${APP}/login`)
  jar.store(page)
  return { jar, page, csrf: hiddenInput(await page.text(), 'csrf_token') }
}

function postLogin(demo: DemoUnderTest, headers: Record<string, string>, csrf: string) {
  return demo.app.request(`${APP}/login`, {
    method: 'POST',
    headers: { 'content-type': FORM, ...headers },
    body: new URLSearchParams({
      email: 'demo@example.com',
      password: 'correct horse battery',
      csrf_token: csrf,
    }).toString(),
  })
}

describe('demo login: CSRF from other origins (https)', () => {
  let demo: DemoUnderTest

  beforeAll(async () => {
    demo = await startDemo({ env: { APP_URL: APP } })
  })
  afterAll(async () => {
    await demo.close()
  })

  it('binds the form token to a __Host- cookie, and the session too', async () => {
    const { jar, page, csrf } = await loginPage(demo)
    const [csrfCookie] = page.headers.getSetCookie()
    expect(csrfCookie).toMatch(/^__Host-kiln_login_csrf=[\w-]+; Path=\/; .*Secure/)
    const response = await postLogin(demo, { cookie: jar.header(), origin: APP }, csrf)
    expect(response.status).toBe(303)
    expect(response.headers.getSetCookie()[0]).toMatch(/^__Host-kiln_session=[\w-]{43}; Path=\/;/)
  })

  it('ignores a planted cookie without the prefix', async () => {
    const planted = 'planted-token-0123456789'
    const response = await postLogin(demo, { cookie: `kiln_login_csrf=${planted}` }, planted)
    expect(response.status).toBe(400)
    expect(response.headers.getSetCookie().join()).not.toContain('kiln_session=')
  })

  it('refuses a login posted from another origin, even with a valid token', async () => {
    const senders: Record<string, string>[] = [
      { origin: 'https://evil.example.com' },
      { origin: 'http://app.example.com' },
      { origin: 'null', 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ]
    for (const headers of senders) {
      const { jar, csrf } = await loginPage(demo)
      const response = await postLogin(demo, { cookie: jar.header(), ...headers }, csrf)
      expect(response.status).toBe(403)
      expect(response.headers.getSetCookie().join()).not.toContain('kiln_session=')
      expect(await response.text()).toContain('sent from another site')
    }
  })

  it('takes a login without Origin from a client that sends no fetch metadata', async () => {
    const { jar, csrf } = await loginPage(demo)
    const response = await postLogin(
      demo,
      { cookie: jar.header(), 'sec-fetch-site': 'same-origin' },
      csrf,
    )
    expect(response.status).toBe(303)
    const plain = await loginPage(demo)
    expect((await postLogin(demo, { cookie: plain.jar.header() }, plain.csrf)).status).toBe(303)
  })

  it('a logout posted from another origin leaves the session alone', async () => {
    const jar = await signIn(demo.app, 'demo@example.com', 'correct horse battery')
    const home = await (
      await demo.app.request(`${APP}/`, { headers: { cookie: jar.header() } })
    ).text()
    const csrf = hiddenInput(home, 'csrf_token')
    const forged = await demo.app.request(`${APP}/logout`, {
      method: 'POST',
      headers: { 'content-type': FORM, cookie: jar.header(), origin: 'https://evil.example.com' },
      body: new URLSearchParams({ csrf_token: csrf }).toString(),
    })
    expect(forged.headers.getSetCookie()).toEqual([])
    const after = await demo.app.request(`${APP}/`, { headers: { cookie: jar.header() } })
    expect(await after.text()).toContain('Signed in')
  })
})
