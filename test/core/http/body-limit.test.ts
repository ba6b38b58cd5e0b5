import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { bodyLimit, errorHandler, readBodyBytes, silentLogger } from '../../../src/core/index.ts'

/** A chunked body of `chunks` × `size` bytes that counts how many bytes were pulled from it. */
function countedStream(chunks: number, size: number) {
  const pulled = { bytes: 0 }
  let sent = 0
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent === chunks) return controller.close()
      sent++
      pulled.bytes += size
      controller.enqueue(new Uint8Array(size).fill(0x61))
    },
  })
  return { stream, pulled }
}

const post = (body: BodyInit, headers: Record<string, string> = {}) =>
  new Request('http://localhost/echo', {
    method: 'POST',
    body,
    headers,
    duplex: 'half',
  } as RequestInit)

describe('readBodyBytes', () => {
  it('reads a body within the limit', async () => {
    expect(new TextDecoder().decode(await readBodyBytes(post('hello'), 5))).toBe('hello')
  })

  it('refuses a declared Content-Length over the limit without reading', async () => {
    const { stream, pulled } = countedStream(4, 1024)
    const request = post(stream, { 'content-length': '4096' })
    await expect(readBodyBytes(request, 1024)).rejects.toMatchObject({ status: 413 })
    // A ReadableStream pre-fills one chunk by itself; nothing more is asked of it.
    expect(pulled.bytes).toBeLessThanOrEqual(1024)
  })

  it('stops reading a chunked body at the limit: 8 MiB sent, about 1 MiB read', async () => {
    const { stream, pulled } = countedStream(128, 64 * 1024)
    await expect(readBodyBytes(post(stream), 1024 * 1024)).rejects.toMatchObject({ status: 413 })
    // One chunk past the limit is what it takes to know the limit is passed.
    expect(pulled.bytes).toBeLessThanOrEqual(1024 * 1024 + 2 * 64 * 1024)
  })
})

describe('bodyLimit middleware', () => {
  const app = new Hono()
  app.onError(errorHandler({ logger: silentLogger() }))
  app.post('/echo', bodyLimit({ maxBytes: 16 }), async (c) => c.text(await c.req.text()))
  app.post('/form', bodyLimit({ maxBytes: 64 }), async (c) => {
    const form = await c.req.parseBody()
    return c.json(form)
  })

  it('passes a small body to the handler', async () => {
    const response = await app.request(post('small'))
    expect(response.status).toBe(200)
    expect(await response.text()).toBe('small')
  })

  it('answers 413 JSON for a declared large body', async () => {
    const response = await app.request(post('x'.repeat(17)))
    expect(response.status).toBe(413)
    expect(await response.json()).toEqual({ error: 'Payload Too Large', code: 'payload_too_large' })
  })

  it('answers 413 for a chunked body as it streams past the limit', async () => {
    const { stream, pulled } = countedStream(1000, 8)
    const response = await app.request(post(stream))
    expect(response.status).toBe(413)
    expect(pulled.bytes).toBeLessThanOrEqual(32)
  })

  it('leaves forms readable by parseBody', async () => {
    const response = await app.request('/form', {
      method: 'POST',
      body: 'email=a%40b.c&x=1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(await response.json()).toEqual({ email: 'a@b.c', x: '1' })
  })

  it('refuses a bad maxBytes when the factory runs', () => {
    expect(() => bodyLimit({ maxBytes: -1 })).toThrow(TypeError)
  })
})
