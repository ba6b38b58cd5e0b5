import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createStorage, local, publicDiskRoutes } from '../../src/storage/index.ts'

describe('publicDiskRoutes: the public disk at its URL base', () => {
  let base: string
  let app: Hono

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'kiln-public-'))
    const root = join(base, 'public')
    mkdirSync(join(root, 'img'), { recursive: true })
    writeFileSync(join(base, 'secret.txt'), 'outside the root')
    symlinkSync(join(base, 'secret.txt'), join(root, 'escape.txt'))
    symlinkSync(base, join(root, 'up'))
    const storage = createStorage({
      default: 'public',
      disks: { public: { driver: local(root), url: '/storage' } },
    })
    await storage.put('img/a b.png', new Uint8Array([0x89, 0x50, 0x4e, 0x47]))
    await storage.put('hello.txt', 'hello')
    await storage.put('page.html', '<script>alert(1)</script>')
    app = new Hono().route('/storage', publicDiskRoutes({ storage }))
    expect(storage.url('img/a b.png')).toBe('/storage/img/a%20b.png')
  })
  afterAll(() => rmSync(base, { recursive: true, force: true }))

  it('serves a file at the URL url() gives, with its content type and caching headers', async () => {
    const res = await app.request('/storage/img/a%20b.png')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/png')
    expect(res.headers.get('content-length')).toBe('4')
    expect(res.headers.get('cache-control')).toBe('public, max-age=3600')
    expect(res.headers.get('etag')).toMatch(/^W\/"[0-9a-f]+-[0-9a-f]+"$/)
    expect(new Date(res.headers.get('last-modified')!).getTime()).toBeGreaterThan(0)
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(
      new Uint8Array([0x89, 0x50, 0x4e, 0x47]),
    )
    const text = await app.request('/storage/hello.txt')
    expect(text.headers.get('content-type')).toMatch(/^text\/plain/)
    expect(await text.text()).toBe('hello')
  })

  it('uploaded HTML cannot run scripts on the origin', async () => {
    const res = await app.request('/storage/page.html')
    expect(res.headers.get('content-security-policy')).toContain('sandbox')
  })

  it('HEAD answers the headers without a body; 304 for a matching ETag or date', async () => {
    const head = await app.request('/storage/hello.txt', { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-length')).toBe('5')
    expect(await head.text()).toBe('')
    const etag = head.headers.get('etag')!
    const lastModified = head.headers.get('last-modified')!
    const conditions: Record<string, string>[] = [
      { 'if-none-match': etag },
      { 'if-none-match': `"other", ${etag.replace(/^W\//, '')}` },
      { 'if-modified-since': lastModified },
    ]
    for (const headers of conditions) {
      const res = await app.request('/storage/hello.txt', { headers })
      expect(res.status, JSON.stringify(headers)).toBe(304)
      expect(await res.text()).toBe('')
      expect(res.headers.get('etag')).toBe(etag)
    }
    const changed = await app.request('/storage/hello.txt', {
      headers: { 'if-none-match': '"nope"', 'if-modified-since': lastModified },
    })
    expect(changed.status).toBe(200)
  })

  it('answers 404 for a missing file and for every way out of the root', async () => {
    for (const path of [
      '/storage/missing.png',
      '/storage/%2e%2e/secret.txt',
      '/storage/%2E%2E%2Fsecret.txt',
      '/storage/img/%2e%2e/%2e%2e/secret.txt',
      '/storage/..%5csecret.txt',
      '/storage/img%5c..%5c..%5csecret.txt',
      '/storage/hello.txt%00.png',
      '/storage/%00',
      '/storage/escape.txt',
      '/storage/up/secret.txt',
      '/storage/%2fetc%2fpasswd',
      '/storage/img',
    ]) {
      const res = await app.request(path)
      expect(res.status, path).toBe(404)
      expect(await res.text(), path).not.toContain('outside the root')
    }
  })

  it('answers other methods 404 and writes nothing', async () => {
    const res = await app.request('/storage/new.txt', { method: 'PUT', body: 'x' })
    expect(res.status).toBe(404)
    expect((await app.request('/storage/new.txt')).status).toBe(404)
  })
})
