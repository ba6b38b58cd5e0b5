import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRateLimiters, ManualClock, RedisKeyValueStore } from '../../src/core/index.ts'
import { createTestRedis, describeWithRedis, type TestRedis } from '../support/redis.ts'
import { documentRoute, serveClientSite } from './cimd-support.ts'
import { authorizeQuery, CHALLENGE, createHarness, form, type Harness } from './support.ts'

let site: Awaited<ReturnType<typeof serveClientSite>>
beforeAll(async () => {
  site = await serveClientSite({
    '/client.json': documentRoute((origin) => ({
      client_id: `${origin}/client.json`,
      client_name: 'Document Client',
      redirect_uris: [`${origin}/callback`],
      grant_types: ['authorization_code', 'urn:ietf:params:oauth:grant-type:device_code'],
    })),
    '/broken.json': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{ not json')
    },
  })
})
afterAll(async () => site?.close())

/** Document fetches the client's site has answered so far. */
const fetches = () => Object.values(site.fetches).reduce((sum, n) => sum + n, 0)

function authorize(harness: Harness, path: string, headers: Record<string, string>) {
  return harness.request(
    authorizeQuery({
      response_type: 'code',
      client_id: `${site.origin}${path}`,
      redirect_uri: `${site.origin}/callback`,
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
    }),
    { headers },
  )
}

const minutes15 = 15 * 60_000

describe('CIMD fetch limits', () => {
  it('limits document fetches per client address; cached documents do not count', async () => {
    const harness = createHarness({
      clientIdMetadataDocuments: {
        allowLoopback: true,
        fetchLimit: { max: 3, windowMs: minutes15 },
      },
      trustProxy: true,
    })
    const cookie = harness.sessions.login('alice')
    const from = (ip: string) => ({ cookie, 'x-forwarded-for': ip })
    // Fetched for one address, the document is cached for everyone.
    expect((await authorize(harness, '/client.json', from('198.51.100.1'))).status).toBe(200)

    const before = fetches()
    const statuses: number[] = []
    for (let i = 0; i < 5; i++) {
      statuses.push((await authorize(harness, `/missing-${i}.json`, from('203.0.113.5'))).status)
    }
    expect(statuses).toEqual([400, 400, 400, 429, 429])
    expect(fetches() - before).toBe(3)
    const limited = await authorize(harness, '/missing-5.json', from('203.0.113.5'))
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    // The other endpoints that read documents count against the same limit.
    const device = await harness.request('/device_authorization', {
      ...form({ client_id: `${site.origin}/missing-6.json` }),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-for': '203.0.113.5',
      },
    })
    expect(device.status).toBe(429)
    expect(fetches() - before).toBe(3)

    // A cached document needs no fetch, and other addresses have their own limit.
    expect((await authorize(harness, '/client.json', from('203.0.113.5'))).status).toBe(200)
    expect((await authorize(harness, '/missing-7.json', from('203.0.113.6'))).status).toBe(400)
    expect(fetches() - before).toBe(4)
  })

  it('caches a failed fetch briefly: no second fetch until it expires', async () => {
    const clock = new ManualClock()
    const harness = createHarness({
      clock,
      clientIdMetadataDocuments: { allowLoopback: true, failureCacheSeconds: 30 },
    })
    const cookie = harness.sessions.login('alice')
    const before = { ...site.fetches }
    const fetched = (path: string) => (site.fetches[path] ?? 0) - (before[path] ?? 0)
    for (let i = 0; i < 3; i++) {
      expect((await authorize(harness, '/broken.json', { cookie })).status).toBe(400)
      expect((await authorize(harness, '/gone.json', { cookie })).status).toBe(400)
    }
    expect([fetched('/broken.json'), fetched('/gone.json')]).toEqual([1, 1])
    clock.advance(29_000)
    await authorize(harness, '/gone.json', { cookie })
    expect(fetched('/gone.json')).toBe(1)
    clock.advance(2_000)
    expect((await authorize(harness, '/gone.json', { cookie })).status).toBe(400)
    expect(fetched('/gone.json')).toBe(2)
  })

  it('refuses a negative failureCacheSeconds when the server is built', () => {
    expect(() => createHarness({ clientIdMetadataDocuments: { failureCacheSeconds: -1 } })).toThrow(
      /failureCacheSeconds/,
    )
  })
})

describeWithRedis('CIMD fetch limits across instances sharing Redis', () => {
  let redis: TestRedis
  beforeAll(async () => {
    redis = await createTestRedis()
  })
  afterAll(async () => redis?.cleanup())

  it('shares failed fetches and the per-address count', async () => {
    // Connections that are ready: a limiter counts in memory until its connection is.
    const connect = async () => {
      const connection = redis.connections.connect()
      await connection.ping()
      return connection
    }
    const instance = async () =>
      createHarness({
        clock: null,
        store: new RedisKeyValueStore(await connect(), { prefix: `${redis.prefix}:` }),
        rateLimiters: createRateLimiters({
          redis: await connect(),
          prefix: `${redis.prefix}:rl`,
          trustProxy: true,
        }),
        clientIdMetadataDocuments: {
          allowLoopback: true,
          fetchLimit: { max: 3, windowMs: minutes15 },
        },
      })
    const [a, b] = [await instance(), await instance()]
    const headers = (harness: Harness) => ({
      cookie: harness.sessions.login('alice'),
      'x-forwarded-for': '203.0.113.20',
    })
    const before = fetches()
    expect((await authorize(a, '/redis-gone.json', headers(a))).status).toBe(400)
    // B knows the document failed: no fetch, no count.
    expect((await authorize(b, '/redis-gone.json', headers(b))).status).toBe(400)
    expect(fetches() - before).toBe(1)
    expect((await authorize(b, '/redis-gone-2.json', headers(b))).status).toBe(400)
    expect((await authorize(a, '/redis-gone-3.json', headers(a))).status).toBe(400)
    expect((await authorize(b, '/redis-gone-4.json', headers(b))).status).toBe(429)
    expect(fetches() - before).toBe(3)
  })
})
