import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashPassword } from '../../examples/demo/src/auth.ts'
import { users } from '../../examples/demo/src/schema.ts'
import { createApiKey } from '../../src/api/index.ts'
import { keyDigest } from '../../src/core/index.ts'
import { type DemoUnderTest, signIn, startDemo } from './support.ts'

/**
 * Account takeover through the generated API, as a security review did it: a key minted for
 * `posts:read` wrote `password_hash` on `PUT /api/v1/users/1` and signed in as the demo user.
 * Scopes now bind each route, and no key, not even `*`, writes a credential column.
 */
describe('the demo API: scoped keys and credential fields', () => {
  let demo: DemoUnderTest
  let reader: string
  let admin: string
  let adminId: number
  let userId: number
  const email = 'demo@example.com'
  const original = 'correct horse battery'

  beforeAll(async () => {
    demo = await startDemo()
    reader = (await createApiKey(demo.ctx.database, { name: 'reader', scopes: ['posts:read'] }))
      .rawKey
    const created = await createApiKey(demo.ctx.database, { name: 'admin', scopes: ['*'] })
    admin = created.rawKey
    adminId = created.record.id
    const db = demo.ctx.database.db as import('../../src/db/index.ts').PostgresDb
    const [user] = await db.select().from(users).where(eq(users.email, email))
    userId = user!.id
  })
  afterAll(async () => {
    await demo?.close()
  })

  const put = (key: string, body: unknown) =>
    demo.app.request(`/api/v1/users/${userId}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
  const canSignIn = (password: string) =>
    signIn(demo.app, email, password).then(
      () => true,
      () => false,
    )
  const storedHash = async () => {
    const db = demo.ctx.database.db as import('../../src/db/index.ts').PostgresDb
    const [user] = await db.select().from(users).where(eq(users.id, userId))
    return user!.passwordHash
  }

  it('a posts:read key gets 403 on PUT /api/v1/users/{id} and changes nothing', async () => {
    const before = await storedHash()
    const chosen = await hashPassword('attacker chosen password')
    for (const body of [{ password_hash: chosen }, { password: 'attacker chosen password' }]) {
      const response = await put(reader, body)
      expect(response.status).toBe(403)
      expect(await response.json()).toEqual({
        error: 'This API key lacks the scope users:write',
        code: 'forbidden',
      })
    }
    expect(await storedHash()).toBe(before)
    const posts = await demo.app.request('/api/v1/posts', {
      headers: { authorization: `Bearer ${reader}` },
    })
    expect(posts.status).toBe(200)
  })

  it('even a * key cannot write password_hash or remember_token, on update or create', async () => {
    const before = await storedHash()
    const chosen = await hashPassword('attacker chosen password')
    for (const body of [{ password_hash: chosen }, { remember_token: 'stolen' }]) {
      const response = await put(admin, body)
      expect(response.status).toBe(422)
      expect(((await response.json()) as { errors: object }).errors).toEqual({
        [Object.keys(body)[0]!]: ['is not a known field'],
      })
    }
    const created = await demo.app.request('/api/v1/users', {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'new@example.com', name: 'New', password_hash: chosen }),
    })
    expect(created.status).toBe(422)
    expect(await storedHash()).toBe(before)
    expect(await canSignIn('attacker chosen password')).toBe(false)
    expect(await canSignIn(original)).toBe(true)
  })

  it('a password given to the API is hashed by the demo’s hasher, never stored as given', async () => {
    const response = await put(admin, { password: 'a brand new passphrase' })
    expect(response.status).toBe(200)
    const stored = await storedHash()
    expect(stored).not.toContain('a brand new passphrase')
    expect(stored).toMatch(/^scrypt\$/)
    expect(await canSignIn('a brand new passphrase')).toBe(true)
    expect(await canSignIn(original)).toBe(false)
  })
  it('answers a retried POST with an Idempotency-Key from the shared store', async () => {
    const post = () =>
      demo.app.request('/api/v1/posts', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${admin}`,
          'content-type': 'application/json',
          'idempotency-key': 'demo-retry-1',
        },
        body: JSON.stringify({ title: 'Once', body: 'Only once', author_id: userId }),
      })
    const first = await post()
    expect(first.status).toBe(201)
    const retry = await post()
    expect(retry.status).toBe(201)
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    expect(await retry.json()).toEqual(await first.json())
    // The answer lives in the demo's shared store (Redis when REDIS_URL is set), as a digest.
    const stored = await demo.ctx.shared.kv.get(
      `kiln:idempotency:${keyDigest(`${adminId}\ndemo-retry-1`)}`,
    )
    expect(stored).toBeDefined()
  })
})
