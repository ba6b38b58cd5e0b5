import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { createRateLimiters, plainResponses, throttle } from '../../../src/core/http/index.ts'
import { errorHandler, silentLogger } from '../../../src/core/index.ts'

/**
 * `plainResponses` builds a group's JSON answers itself: what handlers and middlewares give
 * `c.header()` / `c.status()` must reach the answer as Hono's own helpers would deliver it,
 * whichever way the answer is made.
 */
function app() {
  const limiters = createRateLimiters({ limiters: { api: { points: 2, durationSeconds: 60 } } })
  const root = new Hono()
  root.onError(errorHandler({ logger: silentLogger() }))
  const group = new Hono()
    .use(plainResponses({ cacheControl: 'private, no-cache', vary: 'Authorization' }))
    .use(throttle(limiters, 'api'))
    .get('/json', (c) => {
      c.header('X-Trace', 'a')
      c.header('Vary', 'Accept')
      c.status(202)
      return c.json({ ok: true })
    })
    .get('/text', (c) => {
      c.header('Cache-Control', 'public, max-age=60')
      c.header('Set-Cookie', 'a=1', { append: true })
      c.header('Set-Cookie', 'b=2', { append: true })
      return c.text('hello')
    })
    .get('/own', () => new Response('raw', { headers: { 'content-type': 'text/plain' } }))
  return root.route('/', group)
}

describe('plainResponses', () => {
  it('a JSON answer carries the recorded headers, status, defaults and the throttle headers', async () => {
    const response = await app().request('/json')
    expect(response.status).toBe(202)
    expect(await response.json()).toEqual({ ok: true })
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    expect(response.headers.get('x-trace')).toBe('a')
    expect(response.headers.get('vary')).toBe('Accept, Authorization')
    expect(response.headers.get('cache-control')).toBe('private, no-cache')
    expect(response.headers.get('ratelimit-limit')).toBe('2')
    expect(response.headers.get('ratelimit-remaining')).toBe('1')
  })

  it('an answer made another way gets them too; the handler’s own values win', async () => {
    const text = await app().request('/text')
    expect(await text.text()).toBe('hello')
    expect(text.headers.get('cache-control')).toBe('public, max-age=60')
    expect(text.headers.getSetCookie()).toEqual(['a=1', 'b=2'])
    expect(text.headers.get('ratelimit-remaining')).toBe('1')
    const own = await app().request('/own')
    expect(await own.text()).toBe('raw')
    expect(own.headers.get('vary')).toBe('Authorization')
    expect(own.headers.get('ratelimit-limit')).toBe('2')
  })

  it('a refusal by the throttle is a JSON 429 with Retry-After and the limit headers', async () => {
    const limited = app()
    await limited.request('/json')
    await limited.request('/json')
    const refused = await limited.request('/json')
    expect(refused.status).toBe(429)
    expect(await refused.json()).toEqual({ error: 'Too Many Requests', code: 'too_many_requests' })
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(refused.headers.get('ratelimit-remaining')).toBe('0')
    expect(refused.headers.get('cache-control')).toBe('private, no-cache')
  })
})
