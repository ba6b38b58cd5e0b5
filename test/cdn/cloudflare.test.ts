import { cloudflarePurge, PurgeFailedError, Secret } from 'kilnjs/cdn'
import { afterEach, describe, expect, it } from 'vitest'
import { fakeTime } from './support/clock.ts'
import { loadFixture } from './support/fixtures.ts'
import { type StandIn, startStandIn } from './support/stand-in.ts'

const fixture = loadFixture('cloudflare')
const TOKEN = 'cf-api-token-0123456789abcdef0123456789'
const success = { status: 200, body: JSON.stringify(fixture.response.body) }

describe('Cloudflare purge adapter', () => {
  let standIn: StandIn
  afterEach(() => standIn?.close())

  const adapter = (time = fakeTime(), chunkSize?: number) =>
    cloudflarePurge({
      cdnUrl: fixture.input.baseUrl,
      token: new Secret(TOKEN),
      zoneId: fixture.input.zoneId!,
      apiUrl: `${standIn.url}/client/v4`,
      clock: time.clock,
      sleep: time.sleep,
      chunkSize,
    })

  it('sends the documented requests: files as full URLs, the wildcard as a prefix', async () => {
    standIn = await startStandIn(() => success)
    await adapter().purge(fixture.input.paths)
    expect(standIn.requests).toHaveLength(fixture.requests.length)
    fixture.requests.forEach((expected, i) => {
      const sent = standIn.requests[i]!
      expect(sent.method).toBe(expected.method)
      expect(sent.path).toBe(expected.path)
      expect(sent.headers.authorization).toBe(
        expected.headers.Authorization!.replace('<CLOUDFLARE_API_TOKEN>', TOKEN),
      )
      expect(sent.headers['content-type']).toBe(expected.headers['Content-Type'])
      expect(JSON.parse(sent.body)).toEqual(expected.body)
    })
  })

  it('chunks files by 30 (configurable)', async () => {
    standIn = await startStandIn(() => success)
    const paths = Array.from({ length: 65 }, (_, i) => `p${i}.html`)
    await adapter().purge(paths)
    const bodies = standIn.requests.map((r) => (JSON.parse(r.body) as { files: string[] }).files)
    expect(bodies.map((b) => b.length)).toEqual([30, 30, 5])
    expect(bodies[0]![0]).toBe('https://cdn.example.com/p0.html')
    standIn.requests.length = 0
    await adapter(fakeTime(), 100).purge(paths)
    expect(standIn.requests).toHaveLength(1)
  })

  it('purges everything for *', async () => {
    standIn = await startStandIn(() => success)
    await adapter().purge(['*', 'index.html'])
    expect(standIn.requests).toHaveLength(1)
    expect(JSON.parse(standIn.requests[0]!.body)).toEqual({ purge_everything: true })
  })

  it('checks success: a 200 with success=false is a failure', async () => {
    standIn = await startStandIn(() => ({
      status: 200,
      body: JSON.stringify({
        success: false,
        errors: [{ code: 1012, message: 'Request must contain one of "files"' }],
        messages: [],
        result: null,
      }),
    }))
    const error = (await adapter()
      .purge(['a.html'])
      .catch((e: unknown) => e)) as PurgeFailedError
    expect(error).toBeInstanceOf(PurgeFailedError)
    expect(error.failures).toEqual([
      { paths: ['a.html'], status: 200, reason: 'Request must contain one of "files"' },
    ])
  })

  it('reports authentication errors from the documented error body', async () => {
    const denied = fixture.errorResponses.find((r) => r.status === 403)!
    standIn = await startStandIn(() => ({ status: 403, body: JSON.stringify(denied.body) }))
    const error = (await adapter()
      .purge(['a.html', 'assets/*'])
      .catch((e: unknown) => e)) as PurgeFailedError
    expect(error.failures.map((f) => [f.paths, f.status, f.reason])).toEqual([
      [['a.html'], 403, 'Authentication error'],
      [['assets/*'], 403, 'Authentication error'],
    ])
  })

  it('retries a 429 honouring an HTTP-date Retry-After', async () => {
    const time = fakeTime()
    const at = new Date(time.clock.now() + 5_000).toUTCString()
    standIn = await startStandIn((_, i) =>
      i === 0 ? { status: 429, headers: { 'Retry-After': at }, body: '{}' } : success,
    )
    await adapter(time).purge(['a.html'])
    expect(time.sleeps).toEqual([5_000])
    expect(standIn.requests).toHaveLength(2)
  })

  it('keeps a path below the CDN base in full URLs and prefixes', async () => {
    standIn = await startStandIn(() => success)
    const purge = cloudflarePurge({
      cdnUrl: 'https://cdn.example.com/static/',
      token: new Secret(TOKEN),
      zoneId: 'zone',
      apiUrl: standIn.url,
    })
    await purge.purge(['my page.html', 'img/*'])
    expect(standIn.requests.map((r) => JSON.parse(r.body))).toEqual([
      { files: ['https://cdn.example.com/static/my%20page.html'] },
      { prefixes: ['cdn.example.com/static/img/'] },
    ])
  })
})
