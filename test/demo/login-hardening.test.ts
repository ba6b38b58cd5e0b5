import { scryptSync } from 'node:crypto'
import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { users } from '../../examples/demo/src/schema.ts'
import { createApiKey } from '../../src/api/index.ts'
import { createPasswordHasher } from '../../src/session/index.ts'
import { CookieJar, type DemoUnderTest, hiddenInput, signIn, startDemo } from './support.ts'

/** One login POST from `ip` (the demo trusts one proxy here, which appends the address). */
async function attempt(demo: DemoUnderTest, ip: string, email: string, password: string) {
  const jar = new CookieJar()
  const page = await demo.app.request('/login')
  jar.store(page)
  return demo.app.request('/login', {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: jar.header(),
      'x-forwarded-for': `10.9.9.9, ${ip}`,
    },
    body: new URLSearchParams({
      email,
      password,
      csrf_token: hiddenInput(await page.text(), 'csrf_token'),
    }).toString(),
  })
}

describe('demo login: limits, hashing and session lifetime', () => {
  let demo: DemoUnderTest

  beforeAll(async () => {
    demo = await startDemo({ env: { TRUST_PROXY: 'true' } })
  })
  afterAll(async () => {
    await demo.close()
  })

  it('limits guesses per IP across emails (30 a minute), not only per email', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 32; i++) {
      statuses.push((await attempt(demo, '203.0.113.1', `user${i}@example.com`, 'guess')).status)
    }
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true)
    expect(statuses.slice(30)).toEqual([429, 429])
  })

  it('a stranger failing on an email from elsewhere does not lock its owner out', async () => {
    for (let i = 0; i < 12; i++) await attempt(demo, '203.0.113.2', 'demo@example.com', 'wrong')
    expect((await attempt(demo, '203.0.113.2', 'demo@example.com', 'wrong')).status).toBe(429)
    const owner = await attempt(demo, '198.51.100.7', 'demo@example.com', 'correct horse battery')
    expect(owner.status).toBe(303)
  })

  it('refuses a large login or logout body with 413 before parsing it', async () => {
    const big = `email=${'a'.repeat(1024 * 1024)}`
    for (const path of ['/login', '/logout']) {
      const response = await demo.app.request(path, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: big,
      })
      expect(response.status).toBe(413)
    }
  })

  it('never trusts scrypt parameters read from a stored hash', async () => {
    // A hash a caller could write with cheap parameters (N=2) must not sign anyone in.
    const salt = Buffer.from('0123456789abcdef')
    const key = scryptSync('chosen-password', salt, 32, { N: 2, r: 1, p: 1 })
    const cheap = `scrypt$2$1$1$${salt.toString('base64url')}$${key.toString('base64url')}`
    await demo.ctx.database.db
      .insert(users)
      .values({ email: 'cheap@example.com', name: 'Cheap', passwordHash: cheap })
    expect(
      (await attempt(demo, '198.51.100.20', 'cheap@example.com', 'chosen-password')).status,
    ).toBe(401)
    const hasher = createPasswordHasher()
    expect(await hasher.verify('chosen-password', cheap)).toBe(false)
    expect(await hasher.verify('chosen-password', await hasher.hash('chosen-password'))).toBe(true)
    expect(await hasher.verify('anything', undefined)).toBe(false)
  })

  it('ends sessions when the password changes or the user is deleted', async () => {
    const passwords = createPasswordHasher()
    await demo.ctx.database.db.insert(users).values({
      email: 'leaver@example.com',
      name: 'Leaver',
      passwordHash: await passwords.hash('first password'),
    })
    const signedIn = async (jar: CookieJar) =>
      (await (await demo.app.request('/', { headers: { cookie: jar.header() } })).text()).includes(
        'Signed in',
      )
    const jar = await signIn(demo.app, 'leaver@example.com', 'first password')
    expect(await signedIn(jar)).toBe(true)
    await demo.ctx.database.db
      .update(users)
      .set({ passwordHash: await passwords.hash('second password') })
      .where(eq(users.email, 'leaver@example.com'))
    expect(await signedIn(jar)).toBe(false)

    const again = await signIn(demo.app, 'leaver@example.com', 'second password')
    expect(await signedIn(again)).toBe(true)
    await demo.ctx.database.db.delete(users).where(eq(users.email, 'leaver@example.com'))
    expect(await signedIn(again)).toBe(false)
  })

  it('endAllFor ends every session of a user at once', async () => {
    const a = await signIn(demo.app, 'demo@example.com', 'correct horse battery')
    const b = await signIn(demo.app, 'demo@example.com', 'correct horse battery')
    const request = (jar: CookieJar) =>
      new Request('http://localhost/', { headers: { cookie: jar.header() } })
    const session = await demo.ctx.sessions.current(request(a))
    expect(session).toBeDefined()
    await demo.ctx.sessions.endAllFor(session!.userId)
    expect(await demo.ctx.sessions.current(request(a))).toBeUndefined()
    expect(await demo.ctx.sessions.current(request(b))).toBeUndefined()
  })

  it('the /api/v1 group stops reading a chunked body at its limit (1 MiB) with 413', async () => {
    const { rawKey } = await createApiKey(demo.ctx.database, { name: 'body-limit' })
    let pulled = 0
    const chunk = new TextEncoder().encode(`${' '.repeat(64 * 1024)}`)
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= 8 * 1024 * 1024) return controller.close()
        pulled += chunk.byteLength
        controller.enqueue(chunk)
      },
    })
    const response = await demo.app.request('/api/v1/posts', {
      method: 'POST',
      headers: { authorization: `Bearer ${rawKey}`, 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit)
    expect(response.status).toBe(413)
    expect(pulled).toBeLessThanOrEqual(1024 * 1024 + 2 * chunk.byteLength)
  })
})
