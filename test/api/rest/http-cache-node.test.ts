import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { privateCache } from '../../../src/api/index.ts'

/**
 * `privateCache` behind the Node adapter, as apps run it (not `app.request`): the adapter sends
 * the handler's body as it is unless something turns it into a stream, so the ETag, the 304 and
 * the bytes must come through a real socket intact.
 */
describe('privateCache over @hono/node-server', () => {
  let server: Server
  let origin: string
  const records = Array.from({ length: 200 }, (_, i) => ({ id: i, title: `Post ${i} — é` }))

  beforeAll(async () => {
    const app = new Hono()
    app.use(privateCache())
    app.get('/list', (c) => c.json({ data: records }))
    app.get('/empty', (c) => c.body(null, 200))
    app.post('/list', (c) => c.json({ created: true }, 201))
    await new Promise<void>((resolve) => {
      server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () =>
        resolve(),
      ) as Server
    })
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve))
  })

  it('sends the body unchanged with a strong ETag, and 304 for a matching If-None-Match (weak or not)', async () => {
    const first = await fetch(`${origin}/list`)
    const text = await first.text()
    expect(first.status).toBe(200)
    expect(JSON.parse(text)).toEqual({ data: records })
    expect(first.headers.get('content-length')).toBe(String(Buffer.byteLength(text)))
    expect(first.headers.get('content-type')).toMatch(/application\/json/)
    expect(first.headers.get('cache-control')).toBe('private, no-cache')
    const tag = first.headers.get('etag')
    expect(tag).toMatch(/^"[\w-]{27}"$/)
    const again = await fetch(`${origin}/list`, { headers: { 'if-none-match': tag! } })
    expect(again.status).toBe(304)
    const weak = await fetch(`${origin}/list`, { headers: { 'if-none-match': `W/${tag}` } })
    expect(weak.status).toBe(304)
    expect(again.headers.get('etag')).toBe(tag)
    expect(await again.text()).toBe('')
    const other = await fetch(`${origin}/list`, { headers: { 'if-none-match': 'W/"other"' } })
    expect(other.status).toBe(200)
    expect(await other.text()).toBe(text)
  })

  it('leaves empty answers and other methods without an ETag', async () => {
    const empty = await fetch(`${origin}/empty`)
    expect(empty.status).toBe(200)
    expect(empty.headers.get('etag')).toBeNull()
    expect(await empty.text()).toBe('')
    const created = await fetch(`${origin}/list`, { method: 'POST' })
    expect(created.status).toBe(201)
    expect(created.headers.get('etag')).toBeNull()
    expect(await created.json()).toEqual({ created: true })
  })
})
