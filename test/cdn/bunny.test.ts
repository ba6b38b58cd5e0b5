import { bunnyPurge, PurgeFailedError, Secret } from 'kilnjs/cdn'
import { afterEach, describe, expect, it } from 'vitest'
import { fakeTime } from './support/clock.ts'
import { loadFixture, relativeTo } from './support/fixtures.ts'
import { type StandIn, startStandIn } from './support/stand-in.ts'

const fixture = loadFixture('bunny')
const KEY = 'bunny-account-key-0123456789abcdef'

describe('Bunny purge adapter', () => {
  let standIn: StandIn
  afterEach(() => standIn?.close())

  const adapter = (time = fakeTime()) =>
    bunnyPurge({
      cdnUrl: fixture.input.baseUrl,
      token: new Secret(KEY),
      apiUrl: standIn.url,
      clock: time.clock,
      sleep: time.sleep,
    })

  it('sends one documented POST per path: full URL in the query, AccessKey header, no body', async () => {
    standIn = await startStandIn(() => ({
      status: fixture.response.status,
      body: fixture.response.body as string,
    }))
    await adapter().purge(fixture.input.paths)
    expect(standIn.requests).toHaveLength(fixture.requests.length)
    fixture.requests.forEach((expected, i) => {
      const sent = standIn.requests[i]!
      expect(sent.method).toBe(expected.method)
      expect(sent.url).toBe(relativeTo('https://api.bunny.net', expected.url))
      expect(sent.path).toBe(expected.path)
      expect(sent.query).toEqual(expected.query)
      expect(sent.headers.accesskey).toBe(
        expected.headers.AccessKey!.replace('<BUNNY_ACCOUNT_API_KEY>', KEY),
      )
      expect(sent.headers.authorization).toBeUndefined()
      expect(sent.body).toBe('')
    })
  })

  it('retries a 429 after Retry-After, then succeeds', async () => {
    const time = fakeTime()
    standIn = await startStandIn((_, i) =>
      i === 0 ? { status: 429, headers: { 'Retry-After': '2' } } : { status: 200 },
    )
    await adapter(time).purge(['index.html'])
    expect(standIn.requests).toHaveLength(2)
    expect(time.sleeps).toEqual([2_000])
  })

  it('treats a 401 as a refused AccessKey and names the failed path', async () => {
    standIn = await startStandIn((request) =>
      request.query.url?.endsWith('/b.html') ? { status: 401 } : { status: 200 },
    )
    const error = (await adapter()
      .purge(['a.html', 'b.html', 'c.html'])
      .catch((e: unknown) => e)) as PurgeFailedError
    expect(error).toBeInstanceOf(PurgeFailedError)
    expect(standIn.requests).toHaveLength(3)
    expect(error.failures).toEqual([
      {
        paths: ['b.html'],
        status: 401,
        reason: 'the AccessKey was refused (check CDN_PURGE_TOKEN)',
      },
    ])
    expect(error.message).not.toContain(KEY)
  })

  it('refuses to start without CDN_URL or the key', () => {
    expect(() => bunnyPurge({ cdnUrl: '', token: new Secret(KEY) })).toThrow(TypeError)
    expect(() =>
      bunnyPurge({ cdnUrl: 'https://cdn.example.com', token: undefined as unknown as Secret }),
    ).toThrow(TypeError)
  })
})
