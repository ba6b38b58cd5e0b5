import { join } from 'node:path'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApiKey, createDatabaseApiKeyProvider } from '../../../src/api/index.ts'
import { idempotency } from '../../../src/api/rest/idempotency.ts'
import { createRateLimiters } from '../../../src/core/http/rate-limiters.ts'
import {
  errorHandler,
  MemoryKeyValueStore,
  RedisKeyValueStore,
  type SetOptions,
  silentLogger,
} from '../../../src/core/index.ts'
import { databaseBackends, describeEachDatabase } from '../../support/databases.ts'
import { createTestRedis, describeWithRedis, type TestRedis } from '../../support/redis.ts'
import {
  type GeneratedApi,
  type RunningApi,
  type ScaffoldedApp,
  scaffoldApp,
  startGeneratedApi,
  testHashPassword,
} from './generated-app.ts'

/** A memory store that records its keys and can hold a first claim until released. */
class WatchedStore extends MemoryKeyValueStore {
  readonly keys = new Set<string>()
  hold: Promise<void> | undefined

  override async setIfAbsent(key: string, value: string, options?: SetOptions) {
    this.keys.add(key)
    const claimed = await super.setIfAbsent(key, value, options)
    if (claimed && this.hold) await this.hold
    return claimed
  }

  override async set(key: string, value: string, options?: SetOptions) {
    this.keys.add(key)
    return super.set(key, value, options)
  }
}

describeEachDatabase('generated REST API: Idempotency-Key on POST', (backend) => {
  let scaffolded: ScaffoldedApp
  let api: RunningApi
  let authorId: number
  const store = new WatchedStore()

  beforeAll(async () => {
    scaffolded = await scaffoldApp(backend.dialect)
    api = await startGeneratedApi(scaffolded, backend, { idempotencyStore: store })
    authorId = await api.createUser()
  })
  afterAll(async () => {
    await api?.close()
    scaffolded?.cleanup()
  })

  const post = (title: string) => ({ title, body: `${title} body`, author_id: authorId })

  async function postCount(): Promise<number> {
    const response = await api.request('GET', '/api/v1/posts?count=exact&per_page=1')
    return ((await response.json()) as { meta: { total: number } }).meta.total
  }

  function create(body: unknown, key: string, headers: Record<string, string> = {}) {
    return api.request('POST', '/api/v1/posts', body, { 'idempotency-key': key, ...headers })
  }

  it('a retry with the same key answers the first answer, and creates nothing more', async () => {
    const before = await postCount()
    const first = await create(post('Once'), 'retry-1')
    expect(first.status).toBe(201)
    const firstBody = await first.text()
    const retry = await create(post('Once'), 'retry-1')
    expect(retry.status).toBe(201)
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    expect(retry.headers.get('content-type')).toMatch(/^application\/json/)
    expect(await retry.text()).toBe(firstBody)
    expect(await postCount()).toBe(before + 1)
    // Without the header every POST runs.
    const fresh = await api.request('POST', '/api/v1/posts', post('Once'))
    expect(fresh.headers.get('idempotent-replayed')).toBeNull()
    expect(await postCount()).toBe(before + 2)
  })

  it('works for a bulk create', async () => {
    const before = await postCount()
    const first = await create([post('A'), post('B')], 'bulk-1')
    expect(first.status).toBe(201)
    const retry = await create([post('A'), post('B')], 'bulk-1')
    expect(retry.status).toBe(201)
    expect(await retry.json()).toEqual(await first.json())
    expect(await postCount()).toBe(before + 2)
  })

  it('the same key with another body is a 422, and nothing is created', async () => {
    const first = await create(post('First'), 'reuse-1')
    expect(first.status).toBe(201)
    const before = await postCount()
    const other = await create(post('Other'), 'reuse-1')
    expect(other.status).toBe(422)
    expect(await other.json()).toEqual({
      error: 'Validation failed',
      code: 'validation_failed',
      errors: { 'Idempotency-Key': ['was already used with another request'] },
    })
    expect(await postCount()).toBe(before)
  })

  it('a retry while the first request runs is a 409; the first still answers', async () => {
    let release!: () => void
    store.hold = new Promise((resolve) => {
      release = resolve
    })
    const before = await postCount()
    const first = create(post('Slow'), 'concurrent-1')
    // The first request claimed the key and waits; its duplicate arrives meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 20))
    store.hold = undefined
    const duplicate = await create(post('Slow'), 'concurrent-1')
    expect(duplicate.status).toBe(409)
    expect(await duplicate.json()).toEqual({
      error: 'A request with this Idempotency-Key is still in progress',
      code: 'conflict',
    })
    release()
    expect((await first).status).toBe(201)
    expect(await postCount()).toBe(before + 1)
    const replay = await create(post('Slow'), 'concurrent-1')
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
  })

  it('a refused request is not kept: its corrected retry runs', async () => {
    const refused = await create({ title: 'No body', author_id: authorId }, 'fix-1')
    expect(refused.status).toBe(422)
    const corrected = await create(post('Fixed'), 'fix-1')
    expect(corrected.status).toBe(201)
    expect(corrected.headers.get('idempotent-replayed')).toBeNull()
  })

  it('keys are per API key, and stored as digests', async () => {
    const { rawKey } = await createApiKey(api.database, { name: 'other', scopes: ['*'] })
    const before = await postCount()
    const mine = await create(post('Mine'), 'shared-name-1')
    const theirs = await create(post('Mine'), 'shared-name-1', {
      authorization: `Bearer ${rawKey}`,
    })
    expect([mine.status, theirs.status]).toEqual([201, 201])
    expect(theirs.headers.get('idempotent-replayed')).toBeNull()
    expect(await postCount()).toBe(before + 2)
    expect(store.keys.size).toBeGreaterThan(0)
    for (const key of store.keys) {
      expect(key).toMatch(/^kiln:idempotency:[A-Za-z0-9_-]{43}$/)
      expect(key).not.toContain('shared-name')
    }
  })

  it('422 for an empty, over-long or non-ASCII key; nothing is created', async () => {
    const before = await postCount()
    for (const key of ['x'.repeat(256), 'clé']) {
      const response = await create(post('Bad key'), key)
      expect(response.status, key).toBe(422)
    }
    const response = await api.request('POST', '/api/v1/posts', post('Bad key'), {
      'idempotency-key': '',
    })
    expect(response.status).toBe(422)
    expect(await postCount()).toBe(before)
  })
})

describe('idempotency() middleware', () => {
  function app(store = new MemoryKeyValueStore()) {
    let runs = 0
    const hono = new Hono()
    hono.onError(errorHandler({ logger: silentLogger() }))
    hono.use(idempotency({ store }))
    hono.post('/things', async (c) => c.json({ run: ++runs, body: await c.req.text() }, 201))
    hono.post('/broken', () => {
      throw new Error('boom')
    })
    hono.get('/things', (c) => c.json({ run: ++runs }))
    return { hono, runs: () => runs }
  }
  const post = (key: string, body = '{}') =>
    ({ method: 'POST', body, headers: { 'idempotency-key': key } }) as RequestInit

  it('ignores the header on other methods than POST', async () => {
    const { hono, runs } = app()
    for (let i = 0; i < 2; i++) {
      await hono.request('/things', { headers: { 'idempotency-key': 'k' } })
    }
    expect(runs()).toBe(2)
  })

  it('a server error releases the key: the retry runs', async () => {
    const { hono } = app()
    expect((await hono.request('/broken', post('k'))).status).toBe(500)
    expect((await hono.request('/broken', post('k'))).status).toBe(500)
  })

  it('the same key on another path is another request: 422', async () => {
    const { hono } = app()
    expect((await hono.request('/things', post('k'))).status).toBe(201)
    expect((await hono.request('/things?x=1', post('k'))).status).toBe(422)
  })

  it('refuses a store that is not one, at start-up', () => {
    expect(() => idempotency({ store: undefined as never })).toThrow(TypeError)
  })
})

describeWithRedis('Idempotency-Key across instances (Redis)', () => {
  let redis: TestRedis
  let scaffolded: ScaffoldedApp
  const apis: RunningApi[] = []

  beforeAll(async () => {
    redis = await createTestRedis()
    scaffolded = await scaffoldApp('sqlite')
  })
  afterAll(async () => {
    for (const api of apis) await api.close()
    scaffolded?.cleanup()
    await redis?.cleanup()
  })

  it('a retry that reaches another instance answers the first answer', async () => {
    const store = () =>
      new RedisKeyValueStore(redis.connections.connect(), { prefix: `${redis.prefix}:` })
    const sqlite = databaseBackends.find((backend) => backend.name === 'sqlite')!
    const first = await startGeneratedApi(scaffolded, sqlite, { idempotencyStore: store() })
    apis.push(first)
    // A second instance: another group from the generated routes, on the same database.
    const generated = (await import(join(scaffolded.outDir, 'index.ts'))) as GeneratedApi
    const apiKeys = createDatabaseApiKeyProvider({
      database: first.database,
      logger: silentLogger(),
    })
    const second = new Hono()
    second.route(
      '/',
      generated.apiRoutes({
        database: first.database,
        apiKeys,
        limiters: createRateLimiters({ limiters: { api: { points: 1_000_000 } } }),
        hashPassword: testHashPassword,
        logger: silentLogger(),
        idempotencyStore: store(),
      }),
    )
    const authorId = await first.createUser()
    const body = JSON.stringify({ title: 'Clustered', body: 'b', author_id: authorId })
    const init = {
      method: 'POST',
      body,
      headers: {
        ...first.auth,
        'content-type': 'application/json',
        'idempotency-key': 'cluster-1',
      },
    }
    const a = await first.app.request('/api/v1/posts', init)
    expect(a.status).toBe(201)
    const b = await second.request('/api/v1/posts', init)
    expect(b.status).toBe(201)
    expect(b.headers.get('idempotent-replayed')).toBe('true')
    expect(await b.json()).toEqual(await a.json())
    const keys = await redis.connections.connect().keys(`${redis.prefix}:*`)
    expect(keys).toHaveLength(1)
    expect(keys[0]).not.toContain('cluster-1')
    await apiKeys.close()
  })
})
