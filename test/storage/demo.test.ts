import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Hono } from 'hono'
import { errorHandler, silentLogger } from 'kilnjs/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDemoContext, type DemoContext } from '../../examples/demo/src/context.ts'
import { demoStorage, mountStorage } from '../../examples/demo/src/features/storage.ts'

describe('demo storage feature', () => {
  let ctx: DemoContext
  let app: Hono
  let root: string
  let cookie: string
  let csrf: string

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'kiln-demo-files-'))
    ctx = await createDemoContext({
      databaseUrl: 'pglite:',
      logger: silentLogger(),
      env: {
        APP_URL: 'http://localhost:3999',
        FILESYSTEM_LOCAL_ROOT: root,
        FILESYSTEM_PUBLIC_ROOT: join(root, 'public'),
        STORAGE_URL_SECRET: 'demo-storage-secret-with-at-least-32-chars',
      },
    })
    app = new Hono()
    app.onError(errorHandler({ logger: ctx.logger }))
    mountStorage(app, ctx)
    const { session, cookie: setCookie } = await ctx.sessions.create('1')
    cookie = setCookie.split(';')[0]!
    csrf = session.csrfToken
  }, 120_000)
  afterAll(async () => {
    await ctx?.close()
    await rm(root, { recursive: true, force: true })
  })

  const upload = (form: FormData, headers: Record<string, string> = {}) =>
    app.request('/files', { method: 'POST', body: form, headers: { cookie, ...headers } })

  it('serves the public disk at FILESYSTEM_PUBLIC_URL (/storage), and nothing outside it', async () => {
    const storage = demoStorage(ctx)
    await storage.disk('public').put('img/logo.svg', '<svg xmlns="http://www.w3.org/2000/svg"/>')
    const url = storage.disk('public').url('img/logo.svg')
    expect(url).toBe('/storage/img/logo.svg')
    const response = await app.request(url)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^image\/svg\+xml/)
    expect(response.headers.get('etag')).toBeTruthy()
    expect((await app.request('/storage/%2e%2e/%2e%2e/etc/passwd')).status).toBe(404)
  })

  it('sends visitors without a session to the login page', async () => {
    const response = await app.request('/files')
    expect(response.status).toBe(303)
    expect(response.headers.get('location')).toBe('/login?return_to=%2Ffiles')
  })

  it('uploads a file and serves it through a signed temporary URL', async () => {
    const form = new FormData()
    form.set('csrf_token', csrf)
    form.set(
      'file',
      new File(['hello from the demo'], '../../etc/My Notes.txt', { type: 'text/plain' }),
    )
    const response = await upload(form, { accept: 'application/json' })
    expect(response.status).toBe(201)
    const body = (await response.json()) as { path: string; size: number; url: string }
    expect(body.path).toMatch(/^uploads\/[0-9a-f]{12}-etc_My_Notes\.txt$/)
    expect(body.size).toBe(19)
    const url = new URL(body.url)
    expect(url.origin).toBe('http://localhost:3999')
    expect(url.pathname.startsWith('/files/signed/local/uploads/')).toBe(true)
    const file = await app.request(url.pathname + url.search)
    expect(file.status).toBe(200)
    expect(await file.text()).toBe('hello from the demo')
    expect(file.headers.get('content-type')).toBe('text/plain')

    const listing = await app.request('/files', { headers: { cookie } })
    expect(listing.status).toBe(200)
    const page = await listing.text()
    expect(page).toContain(body.path)
    expect(page).toContain('/files/signed/local/uploads/')
  })

  it('refuses uploads without the CSRF token, without a file, or over 10 MiB', async () => {
    const noToken = new FormData()
    noToken.set('file', new File(['x'], 'x.txt'))
    expect((await upload(noToken)).status).toBe(403)

    const noFile = new FormData()
    noFile.set('csrf_token', csrf)
    const missing = await upload(noFile)
    expect(missing.status).toBe(422)
    expect(await missing.json()).toEqual({
      error: 'Validation failed',
      code: 'validation_failed',
      errors: { file: ['Choose a non-empty file'] },
    })

    const big = new FormData()
    big.set('csrf_token', csrf)
    big.set('file', new File([new Uint8Array(11 * 1024 * 1024)], 'big.bin'))
    expect((await upload(big)).status).toBe(413)

    const anonymous = new FormData()
    anonymous.set('file', new File(['x'], 'x.txt'))
    expect((await app.request('/files', { method: 'POST', body: anonymous })).status).toBe(401)
  })
})
