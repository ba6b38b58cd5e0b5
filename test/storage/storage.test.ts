import { inspect } from 'node:util'
import { Hono } from 'hono'
import { ConfigError, ManualClock, Redactor, Secret } from 'kilnjs/core'
import {
  createStorage,
  createStorageFromEnv,
  loadStorageConfig,
  local,
  memory,
  StorageUnsupportedError,
  storageRoutes,
  UnknownDiskError,
} from 'kilnjs/storage'
import { describe, expect, it } from 'vitest'

const SECRET = 'a-signing-secret-of-at-least-32-characters'

describe('the Storage facade', () => {
  it('runs every operation on the default disk and reaches the others by name', async () => {
    const storage = createStorage({
      default: 'main',
      disks: { main: { driver: memory() }, archive: { driver: memory() } },
    })
    await storage.put('a.txt', 'main')
    await storage.disk('archive').put('a.txt', 'archive')
    expect(await storage.getString('a.txt')).toBe('main')
    expect(await storage.disk('main').getString('a.txt')).toBe('main')
    expect(await storage.disk('archive').getString('a.txt')).toBe('archive')
    expect(storage.diskNames()).toEqual(['main', 'archive'])
    expect(() => storage.disk('nope')).toThrow(UnknownDiskError)
    expect(() => storage.disk('nope')).toThrow('Unknown disk "nope" (configured: main, archive)')
  })

  it('refuses a configuration without the default disk or with a non-disk', () => {
    expect(() => createStorage({ default: 'x', disks: { main: { driver: memory() } } })).toThrow(
      TypeError,
    )
    expect(() =>
      createStorage({ default: 'main', disks: { main: { driver: {} as never } } }),
    ).toThrow(TypeError)
    expect(() => local('')).toThrow(TypeError)
  })

  it('composes url() and cdnUrl() as strings, collapsing slashes between base and path', async () => {
    const storage = createStorage({
      default: 'public',
      disks: {
        public: { driver: memory(), url: '/storage/', cdn: 'https://cdn.example.com//' },
        origin: { driver: memory(), url: 'https://app.example.com/files' },
        bare: { driver: memory() },
      },
    })
    expect(storage.url('img/a b.png')).toBe('/storage/img/a%20b.png')
    expect(storage.cdnUrl('img/logo.png')).toBe('https://cdn.example.com/img/logo.png')
    // The call docs/storage.md shows: a leading slash collapses into the one after the base.
    expect(storage.cdnUrl('/img/a.png')).toBe('https://cdn.example.com/img/a.png')
    expect(storage.cdnUrl('//img//logo.png')).toBe('https://cdn.example.com/img/logo.png')
    expect(storage.url('/x')).toBe('/storage/x')
    expect(storage.disk('origin').url('/a b/c.css')).toBe(
      'https://app.example.com/files/a%20b/c.css',
    )
    expect(storage.disk('origin').cdnUrl('/x.css')).toBe('https://app.example.com/files/x.css')
    // Only URL composition: file operations still refuse absolute paths, and escapes fail.
    await expect(storage.put('/x', 'a')).rejects.toThrow('absolute paths are not allowed')
    for (const bad of ['/../x', '/a/../../x', '/a\\b', '/a\0b', '/']) {
      expect(() => storage.cdnUrl(bad), bad).toThrow('Invalid path')
    }
    expect(storage.disk('origin').cdnUrl('x.css')).toBe('https://app.example.com/files/x.css')
    expect(() => storage.disk('bare').url('x.css')).toThrow(StorageUnsupportedError)
    expect(() => storage.disk('bare').cdnUrl('x.css')).toThrow(StorageUnsupportedError)
    expect(() => storage.url('../x')).toThrow('Invalid path')
  })

  it('cannot make temporary URLs on a local disk without temporaryUrls', async () => {
    const storage = createStorage({ default: 'm', disks: { m: { driver: memory() } } })
    await expect(storage.temporaryUrl('a.txt', 60)).rejects.toBeInstanceOf(StorageUnsupportedError)
  })
})

describe('signed temporary URLs and storageRoutes', () => {
  const setup = () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1))
    const storage = createStorage({
      default: 'local',
      disks: { local: { driver: memory({ clock }) }, other: { driver: memory({ clock }) } },
      temporaryUrls: { secret: SECRET, baseUrl: 'https://app.example.com/files/signed/', clock },
    })
    const app = new Hono()
    app.route('/files/signed', storageRoutes({ storage }))
    const get = (url: string) => app.request(url.replace('https://app.example.com', ''))
    return { clock, storage, app, get }
  }

  it('serves the file while the signature is valid, then answers 403', async () => {
    const { clock, storage, get } = setup()
    await storage.put('invoices/2026 01.pdf', '%PDF-1.7 test')
    const url = await storage.temporaryUrl('invoices/2026 01.pdf', 300)
    const parsed = new URL(url)
    expect(parsed.pathname).toBe('/files/signed/local/invoices/2026%2001.pdf')
    expect(parsed.searchParams.get('expires')).toBe(String(Date.UTC(2026, 0, 1) / 1000 + 300))
    expect(parsed.searchParams.get('signature')).toMatch(/^[A-Za-z0-9_-]{43}$/)

    const ok = await get(url)
    expect(ok.status).toBe(200)
    expect(await ok.text()).toBe('%PDF-1.7 test')
    expect(ok.headers.get('content-type')).toBe('application/pdf')
    expect(ok.headers.get('content-length')).toBe('13')
    expect(ok.headers.get('x-content-type-options')).toBe('nosniff')
    expect(ok.headers.get('content-security-policy')).toContain('sandbox')
    expect(ok.headers.get('cache-control')).toBe('private, max-age=300')

    clock.advance(299_000)
    expect((await get(url)).status).toBe(200)
    clock.advance(1_000)
    const expired = await get(url)
    expect(expired.status).toBe(403)
    expect(await expired.json()).toEqual({ error: 'This link has expired', code: 'forbidden' })
  })

  it('rejects altered paths, expiries, disks and signatures with 403', async () => {
    const { storage, get } = setup()
    await storage.put('a.txt', 'a')
    await storage.put('b.txt', 'b')
    await storage.disk('other').put('a.txt', 'other')
    const url = await storage.temporaryUrl('a.txt', 60)
    const u = new URL(url)
    const signature = u.searchParams.get('signature')!
    const expires = u.searchParams.get('expires')!
    const variants = [
      url.replace('/local/a.txt', '/local/b.txt'),
      url.replace('/local/a.txt', '/other/a.txt'),
      url.replace(`expires=${expires}`, `expires=${Number(expires) + 3600}`),
      url.replace(signature, `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`),
      url.replace(`&signature=${signature}`, ''),
      url.replace(`expires=${expires}`, 'expires=abc'),
      url.replace(signature, 'short'),
    ]
    for (const variant of variants) {
      const response = await get(variant)
      expect(response.status, variant).toBe(403)
      expect(await response.json()).toEqual({ error: 'Invalid signature', code: 'forbidden' })
    }
  })

  it('answers 404 for a validly signed URL whose file is gone, 400 for a bad path', async () => {
    const { storage, get } = setup()
    await storage.put('gone.txt', 'x')
    const url = await storage.temporaryUrl('gone.txt', 60)
    await storage.delete('gone.txt')
    const response = await get(url)
    expect(response.status).toBe(404)
    expect(await response.json()).toEqual({
      error: 'File not found: gone.txt',
      code: 'file_not_found',
    })
    const traversal = await get('/files/signed/local/..%2F..%2Fetc%2Fpasswd?expires=1&signature=x')
    expect(traversal.status).toBe(400)
  })

  it('signs URLs for other disks with the disk name', async () => {
    const { storage, get } = setup()
    await storage.disk('other').put('x.json', '{}')
    const url = await storage.disk('other').temporaryUrl('x.json', 60)
    expect(new URL(url).pathname).toBe('/files/signed/other/x.json')
    const response = await get(url)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/json')
  })

  it('refuses a short secret and a storage without temporaryUrls at start-up', () => {
    expect(() =>
      createStorage({
        default: 'm',
        disks: { m: { driver: memory() } },
        temporaryUrls: { secret: 'short', baseUrl: '/s' },
      }),
    ).toThrow(TypeError)
    const plain = createStorage({ default: 'm', disks: { m: { driver: memory() } } })
    expect(() => storageRoutes({ storage: plain })).toThrow(TypeError)
  })

  it('never shows the signing secret in debug output', () => {
    const { storage } = setup()
    expect(inspect(storage, { depth: 10 })).not.toContain(SECRET)
    expect(JSON.stringify(storage)).not.toContain(SECRET)
  })
})

describe('storage configuration from the environment', () => {
  it('applies the documented defaults', () => {
    const config = loadStorageConfig({})
    expect(config).toEqual({
      defaultDisk: 'local',
      local: { root: './storage', url: undefined },
      public: { root: './storage/public', url: '/storage' },
      objectStore: undefined,
      cdnUrl: undefined,
    })
  })

  it('reads the object store variables', () => {
    const config = loadStorageConfig({
      FILESYSTEM_DISK: 's3',
      OBJSTORE_BUCKET: 'media',
      OBJSTORE_ACCESS_KEY_ID: 'AKIA',
      OBJSTORE_SECRET_ACCESS_KEY: 'secret',
      OBJSTORE_URL: 'https://media.example.com',
      OBJSTORE_ENDPOINT: 'https://fra1.digitaloceanspaces.com',
      OBJSTORE_USE_PATH_STYLE_ENDPOINT: 'true',
    })
    expect(config.defaultDisk).toBe('s3')
    expect(config.objectStore?.secretAccessKey?.reveal()).toBe('secret')
    expect(config.objectStore).toEqual({
      bucket: 'media',
      region: 'us-east-1',
      accessKeyId: 'AKIA',
      secretAccessKey: expect.any(Secret),
      url: 'https://media.example.com',
      endpoint: 'https://fra1.digitaloceanspaces.com',
      forcePathStyle: true,
    })
  })

  it('names every bad variable', () => {
    expect(() => loadStorageConfig({ FILESYSTEM_DISK: 's3' })).toThrow(ConfigError)
    expect(() => loadStorageConfig({ FILESYSTEM_DISK: 's3' })).toThrow(
      'FILESYSTEM_DISK: is s3, but OBJSTORE_BUCKET is not set',
    )
    expect(() => loadStorageConfig({ FILESYSTEM_DISK: 'ftp' })).toThrow(
      'FILESYSTEM_DISK: expected one of local, public',
    )
    expect(() => loadStorageConfig({ OBJSTORE_URL: 'nope' })).toThrow('OBJSTORE_URL')
    expect(() =>
      loadStorageConfig({ OBJSTORE_BUCKET: 'b', OBJSTORE_ACCESS_KEY_ID: 'AKIA' }),
    ).toThrow('OBJSTORE_SECRET_ACCESS_KEY')
  })

  it('builds the local, public and s3 disks with URL and CDN bases', () => {
    const storage = createStorageFromEnv({
      FILESYSTEM_DISK: 'public',
      FILESYSTEM_LOCAL_ROOT: '/tmp/kiln-never-written-local',
      FILESYSTEM_PUBLIC_ROOT: '/tmp/kiln-never-written-public',
      OBJSTORE_BUCKET: 'media',
      OBJSTORE_URL: 'https://media.example.com',
      CDN_URL: 'https://cdn.example.com',
    })
    expect(storage.diskNames()).toEqual(['local', 'public', 's3'])
    expect(storage.defaultDisk).toBe('public')
    expect(storage.url('a.png')).toBe('/storage/a.png')
    expect(storage.cdnUrl('a.png')).toBe('https://cdn.example.com/a.png')
    expect(storage.disk('s3').url('a.png')).toBe('https://media.example.com/a.png')
    expect(storage.disk('s3').cdnUrl('a.png')).toBe('https://cdn.example.com/a.png')
    expect(() => storage.disk('local').url('a.png')).toThrow(StorageUnsupportedError)
  })
})

describe('storage secrets in logs', () => {
  it('registers the object-store secret and the signing secret with the Redactor', () => {
    const redactor = new Redactor()
    createStorageFromEnv(
      {
        FILESYSTEM_LOCAL_ROOT: '/tmp/kiln-never-written-local',
        OBJSTORE_BUCKET: 'media',
        OBJSTORE_ACCESS_KEY_ID: 'AKIAEXAMPLE',
        OBJSTORE_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      },
      { temporaryUrls: { secret: SECRET, baseUrl: '/signed' }, redactor },
    )
    expect(redactor.scrub(`s3 wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY and ${SECRET}`)).toBe(
      's3 <redacted> and <redacted>',
    )
  })
})
