import { digitalOceanPurge, PurgeFailedError, Secret } from 'kilnjs/cdn'
import type { Logger } from 'kilnjs/core'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestRedis, describeWithRedis, type TestRedis } from '../support/redis.ts'
import { fakeTime } from './support/clock.ts'
import { loadFixture } from './support/fixtures.ts'
import { capturingLogger } from './support/logger.ts'
import { type Reply, type StandIn, startStandIn } from './support/stand-in.ts'

const fixture = loadFixture('digitalocean')
const TOKEN = 'dop_v1_0123456789abcdef0123456789abcdef'
const ok: Reply = { status: 204 }

describe('DigitalOcean purge adapter', () => {
  let standIn: StandIn
  afterEach(() => standIn?.close())

  const adapter = (
    time = fakeTime(),
    extra: { endpointId?: string | undefined; logger?: Logger } = {},
  ) =>
    digitalOceanPurge({
      endpointId: 'endpointId' in extra ? extra.endpointId : fixture.input.endpointId,
      logger: extra.logger,
      token: new Secret(TOKEN),
      apiUrl: standIn.url,
      cdnUrl: fixture.input.baseUrl,
      clock: time.clock,
      sleep: time.sleep,
    })

  it('sends the documented request: DELETE, bearer token, JSON body of relative paths', async () => {
    standIn = await startStandIn(() => ok)
    await adapter().purge(fixture.input.paths)
    expect(standIn.requests).toHaveLength(fixture.requests.length)
    const [expected] = fixture.requests
    const [sent] = standIn.requests
    expect(sent!.method).toBe(expected!.method)
    expect(sent!.path).toBe(expected!.path)
    expect(sent!.headers.authorization).toBe(
      expected!.headers.Authorization!.replace('<DIGITALOCEAN_TOKEN>', TOKEN),
    )
    expect(sent!.headers['content-type']).toBe(expected!.headers['Content-Type'])
    expect(JSON.parse(sent!.body)).toEqual(expected!.body)
  })

  it('strips the CDN base URL and leading slashes, and drops duplicates', async () => {
    standIn = await startStandIn(() => ok)
    await adapter().purge(['https://cdn.example.com/index.html', '/index.html', 'assets/*'])
    expect(JSON.parse(standIn.requests[0]!.body)).toEqual({ files: ['index.html', 'assets/*'] })
  })

  it('sends 120 paths as 3 requests of at most 50, a wildcard counting as one', async () => {
    standIn = await startStandIn(() => ok)
    const paths = [...Array.from({ length: 119 }, (_, i) => `page-${i}.html`), 'assets/*']
    await adapter().purge(paths)
    const bodies = standIn.requests.map((r) => (JSON.parse(r.body) as { files: string[] }).files)
    expect(bodies.map((files) => files.length)).toEqual([50, 50, 20])
    expect(bodies.flat()).toEqual(paths)
    expect(bodies[2]!.at(-1)).toBe('assets/*')
  })

  it('sends at most 5 requests in any 10-second sliding window', async () => {
    const time = fakeTime()
    const sentAt: number[] = []
    standIn = await startStandIn(() => {
      sentAt.push(time.clock.now())
      return ok
    })
    const paths = Array.from({ length: 12 * 50 }, (_, i) => `p/${i}.html`)
    await adapter(time).purge(paths)
    expect(standIn.requests).toHaveLength(12)
    const start = Date.UTC(2026, 0, 1)
    expect(sentAt.map((t) => t - start)).toEqual([
      0, 0, 0, 0, 0, 10_000, 10_000, 10_000, 10_000, 10_000, 20_000, 20_000,
    ])
    for (const t of sentAt) {
      expect(sentAt.filter((u) => u > t - 10_000 && u <= t).length).toBeLessThanOrEqual(5)
    }
  })

  it('keeps the window across purge calls of one adapter', async () => {
    const time = fakeTime()
    standIn = await startStandIn(() => ok)
    const purge = adapter(time)
    for (let i = 0; i < 6; i++) await purge.purge([`file-${i}.html`])
    expect(time.sleeps).toEqual([10_000])
    time.clock.advance(30_000)
    await purge.purge(['again.html'])
    expect(time.sleeps).toEqual([10_000])
  })

  it('retries a 429 after its Retry-After', async () => {
    const time = fakeTime()
    const limited = fixture.errorResponses.find((r) => r.status === 429)!
    standIn = await startStandIn((_, index) =>
      index === 0
        ? {
            status: 429,
            headers: { 'Retry-After': '7', 'Content-Type': 'application/json' },
            body: JSON.stringify(limited.body),
          }
        : ok,
    )
    await adapter(time).purge(['index.html'])
    expect(standIn.requests).toHaveLength(2)
    expect(time.sleeps).toEqual([7_000])
    expect(standIn.requests[1]!.body).toBe(standIn.requests[0]!.body)
  })

  it('gives up after bounded retries and reports the batch', async () => {
    const time = fakeTime()
    standIn = await startStandIn(() => ({ status: 429, headers: { 'Retry-After': '1' } }))
    const error = (await adapter(time)
      .purge(['index.html'])
      .catch((e: unknown) => e)) as PurgeFailedError
    expect(error).toBeInstanceOf(PurgeFailedError)
    expect(standIn.requests).toHaveLength(4)
    expect(error.failures).toEqual([
      { paths: ['index.html'], status: 429, reason: 'unexpected status 429' },
    ])
  })

  it('does not wait for a Retry-After beyond the bound', async () => {
    const time = fakeTime()
    standIn = await startStandIn(() => ({ status: 429, headers: { 'Retry-After': '3600' } }))
    await expect(adapter(time).purge(['index.html'])).rejects.toBeInstanceOf(PurgeFailedError)
    expect(standIn.requests).toHaveLength(1)
    expect(time.sleeps).toEqual([])
  })

  it('reports which batches failed and still sends the others', async () => {
    const unauthorized = fixture.errorResponses.find((r) => r.status === 401)!
    standIn = await startStandIn((_, index) =>
      index === 1 ? { status: 401, body: JSON.stringify(unauthorized.body) } : ok,
    )
    const paths = Array.from({ length: 120 }, (_, i) => `f${i}.html`)
    const error = (await adapter()
      .purge(paths)
      .catch((e: unknown) => e)) as PurgeFailedError
    expect(standIn.requests).toHaveLength(3)
    expect(error).toBeInstanceOf(PurgeFailedError)
    expect(error.status).toBe(502)
    expect(error.batches).toBe(3)
    expect(error.failures).toEqual([
      { paths: paths.slice(50, 100), status: 401, reason: 'Unable to authenticate you.' },
    ])
    expect(error.message).toContain('failed for 1 of 3 request(s)')
    expect(error.message).not.toContain(TOKEN)
  })

  it('never echoes the token from a provider answer', async () => {
    standIn = await startStandIn(() => ({ status: 400, body: `bad token ${TOKEN}` }))
    const error = (await adapter()
      .purge(['a.html'])
      .catch((e: unknown) => e)) as PurgeFailedError
    expect(error.failures[0]!.reason).toBe('bad token <redacted>')
    expect(error.message).not.toContain(TOKEN)
  })

  it('logs and succeeds without a request when CDN_PURGE_ZONE is unset', async () => {
    standIn = await startStandIn(() => ok)
    const { logger, lines } = capturingLogger()
    await adapter(fakeTime(), { endpointId: undefined, logger }).purge(['index.html'])
    expect(standIn.requests).toHaveLength(0)
    expect(lines.join('')).toContain('CDN purge skipped: CDN_PURGE_ZONE')
  })

  it('reports an unreachable API as a failed batch', async () => {
    standIn = await startStandIn(() => ok)
    await standIn.close()
    const error = (await adapter()
      .purge(['index.html'])
      .catch((e: unknown) => e)) as PurgeFailedError
    expect(error).toBeInstanceOf(PurgeFailedError)
    expect(error.failures[0]!.reason).toMatch(/^request failed/)
  })
})

describeWithRedis('DigitalOcean purge window shared on Redis', () => {
  let standIn: StandIn
  let redis: TestRedis
  afterEach(async () => {
    await standIn?.close()
    await redis?.cleanup()
  })

  it('two adapters (two instances) together send at most 5 requests per window', async () => {
    redis = await createTestRedis()
    standIn = await startStandIn(() => ok)
    // A sleep that records the wait and never ends: what got through the window is what was sent.
    const waits: number[] = []
    const sleep = (ms: number) => {
      waits.push(ms)
      return new Promise<void>(() => {})
    }
    const instance = () =>
      digitalOceanPurge({
        endpointId: fixture.input.endpointId,
        token: new Secret(TOKEN),
        apiUrl: standIn.url,
        sleep,
        redis: redis.connections.connect(),
        redisPrefix: `${redis.prefix}:`,
      })
    const [first, second] = [instance(), instance()]
    for (let i = 0; i < 5; i++) {
      void first.purge([`first-${i}.html`])
      void second.purge([`second-${i}.html`])
    }
    await expect.poll(() => standIn.requests.length + waits.length).toBe(10)
    expect(standIn.requests).toHaveLength(5)
    expect(waits).toHaveLength(5)
    for (const ms of waits) {
      expect(ms).toBeGreaterThan(0)
      expect(ms).toBeLessThanOrEqual(10_000)
    }
    const key = `${redis.prefix}:cdn-purge:digitalocean:${fixture.input.endpointId}`
    const shared = redis.connections.connect()
    expect(await shared.zcard(key)).toBe(5)
    expect(await shared.pttl(key)).toBeGreaterThan(0)
  })
})
