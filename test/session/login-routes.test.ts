import { Writable } from 'node:stream'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createLogger,
  createRateLimiters,
  errorHandler,
  type KeyValueStore,
  MemoryKeyValueStore,
  type RateLimiters,
  RedisKeyValueStore,
} from '../../src/core/index.ts'
import { createPasswordHasher, createSessionStore, loginRoutes } from '../../src/session/index.ts'
import { redisUrl } from '../support/env.ts'
import { createTestRedis, type TestRedis } from '../support/redis.ts'

const EMAIL = 'ada@example.com'
const PASSWORD = 'correct horse battery'
const FORM = 'application/x-www-form-urlencoded'

let testRedis: TestRedis | undefined
beforeAll(async () => {
  if (redisUrl) testRedis = await createTestRedis()
})
afterAll(async () => {
  await testRedis?.cleanup()
})

let unique = 0
interface Backend {
  name: string
  available: boolean
  open(): Promise<{ store: KeyValueStore; limiters: RateLimiters; prefix: string }>
}
const backends: Backend[] = [
  {
    name: 'memory',
    available: true,
    open: async () => ({
      store: new MemoryKeyValueStore(),
      limiters: createRateLimiters(),
      prefix: '',
    }),
  },
  {
    name: 'redis',
    available: redisUrl !== undefined,
    open: async () => {
      if (!testRedis) throw new Error('no Redis')
      const redis = testRedis.connections.connect({ name: 'login' })
      await redis.ping()
      const prefix = `${testRedis.prefix}:${unique++}`
      return {
        store: new RedisKeyValueStore(redis, { prefix: `${prefix}:kv:` }),
        limiters: createRateLimiters({ redis, prefix: `${prefix}:rl` }),
        prefix,
      }
    },
  },
]

/** A logger whose JSON lines land in an array. */
function captureLogs() {
  let text = ''
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      text += chunk
      callback()
    },
  })
  return {
    logger: createLogger({ level: 'info', destination }),
    text: () => text,
    lines: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  }
}

async function loginApp(backend: Backend, extra: Partial<Parameters<typeof loginRoutes>[0]> = {}) {
  const { store, limiters, prefix } = await backend.open()
  const passwords = createPasswordHasher({ cost: 1024 })
  const stored = await passwords.hash(PASSWORD)
  const sessions = createSessionStore({ store, secure: false })
  const app = new Hono()
  app.onError(errorHandler({ logger: createLogger({ level: 'silent' }) }))
  app.route(
    '/',
    loginRoutes({
      sessions,
      limiters,
      verifyCredentials: async ({ email, password }) =>
        (await passwords.verify(password, email === EMAIL ? stored : undefined)) ? '1' : undefined,
      ...extra,
    }),
  )
  return { app, prefix }
}

/** A login page's cookie and token, and a function posting the form with them. */
async function loginForm(app: Hono) {
  const page = await app.request('/login')
  const cookie = page.headers.getSetCookie()[0]!.split(';')[0]!
  const csrf = (await page.text()).match(/name="csrf_token" value="([^"]+)"/)![1]!
  return (email: string, password: string, headers: Record<string, string> = {}) =>
    app.request('/login', {
      method: 'POST',
      headers: { 'content-type': FORM, cookie, ...headers },
      body: new URLSearchParams({ email, password, csrf_token: csrf }).toString(),
    })
}

for (const backend of backends) {
  describe.skipIf(!backend.available)(`loginRoutes [${backend.name}]`, () => {
    it('judges 28 concurrent failed logins against the limit of 10', async () => {
      const { app } = await loginApp(backend)
      const post = await loginForm(app)
      const answers = await Promise.all(
        Array.from({ length: 28 }, () => post(EMAIL, 'wrong password')),
      )
      const statuses = answers.map((answer) => answer.status)
      expect(statuses.filter((status) => status === 401)).toHaveLength(10)
      expect(statuses.filter((status) => status === 429)).toHaveLength(18)
    })

    it('logs failed logins, lockouts and rate limits at info, without the password', async () => {
      const logs = captureLogs()
      const { app } = await loginApp(backend, { logger: logs.logger })
      const post = await loginForm(app)
      for (let i = 0; i < 11; i++) await post(EMAIL, 'hunter2-wrong')
      const refused = logs.lines().filter((line) => line.msg === 'login refused')
      expect(refused.map((line) => line.reason)).toEqual([
        ...Array(10).fill('wrong email or password'),
        'locked out',
      ])
      for (const line of refused) {
        expect(line.level).toBe(30)
        expect(line.ip).toBe('unknown')
        expect(line.email).toMatch(/^[\w-]{43}$/)
      }
      expect(logs.text()).not.toContain('hunter2-wrong')
      expect(logs.text()).not.toContain(EMAIL)
    })

    it('refuses, without a session, a form posted from another origin (no APP_URL given)', async () => {
      const { app } = await loginApp(backend)
      const post = await loginForm(app)
      for (const origin of ['http://localhost:4000', 'https://evil.example']) {
        const response = await post(EMAIL, PASSWORD, { origin })
        expect(response.status).toBe(403)
        expect(response.headers.getSetCookie().join()).not.toContain('kiln_session=')
      }
      // The name the request reached, over http or https (a proxy may end TLS).
      for (const origin of ['http://localhost', 'https://localhost']) {
        expect((await post(EMAIL, PASSWORD, { origin })).status).toBe(303)
      }
    })
  })
}

describe('rate limiters log a spent bucket once per window', () => {
  it('logs the first refusal of a bucket at info, not every one', async () => {
    const logs = captureLogs()
    const limiters = createRateLimiters({ logger: logs.logger, limiters: { tight: { points: 2 } } })
    const request = { ip: '203.0.113.9', apiKey: undefined, method: 'GET', path: '/x' }
    for (let i = 0; i < 6; i++) await limiters.consume('tight', request)
    expect(logs.lines()).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'rate limit reached',
        limiter: 'tight',
        ip: '203.0.113.9',
        method: 'GET',
        path: '/x',
        limit: 2,
      }),
    ])
  })
})

describe.skipIf(redisUrl === undefined)('Redis key names after a login', () => {
  it('hold neither the session cookie nor the emails tried', async () => {
    const [, redis] = backends
    const { app, prefix } = await loginApp(redis!)
    const post = await loginForm(app)
    expect((await post('stranger@example.com', 'wrong')).status).toBe(401)
    const signedIn = await post(EMAIL, PASSWORD)
    expect(signedIn.status).toBe(303)
    const cookie = signedIn.headers
      .getSetCookie()
      .find((line) => line.startsWith('kiln_session='))!
      .split(';')[0]!
      .slice('kiln_session='.length)
    expect(cookie).toMatch(/^[\w-]{43}$/)
    const keys = await testRedis!.connections.connect().keys(`${prefix}:*`)
    expect(keys.some((key) => key.includes(':session:'))).toBe(true)
    expect(keys.some((key) => key.includes(':rl:login-email-ip:'))).toBe(true)
    for (const key of keys) {
      expect(key).not.toContain(cookie)
      expect(key).not.toContain('@example.com')
    }
  })
})
