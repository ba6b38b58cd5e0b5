import { mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { Hono } from 'hono'
import { ManualClock } from 'kilnjs/core'
import { createStorage, InvalidPathError, local, type Storage, storageRoutes } from 'kilnjs/storage'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

describe('local disk', () => {
  let base: string
  let root: string
  let outside: string
  let storage: Storage

  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'kiln-local-'))
    root = join(base, 'root')
    outside = join(base, 'outside')
    await mkdir(outside)
    await writeFile(join(outside, 'secret.txt'), 'top secret')
    storage = createStorage({ default: 'local', disks: { local: { driver: local(root) } } })
  })
  afterEach(() => rm(base, { recursive: true, force: true }))

  it('creates its root on first use', async () => {
    await storage.put('a/b.txt', 'x')
    expect((await stat(join(root, 'a', 'b.txt'))).size).toBe(1)
  })

  it('refuses symbolic links that lead out of the root, for reads and writes', async () => {
    await storage.makeDirectory('inside')
    await symlink(outside, join(root, 'escape'))
    await symlink(join(outside, 'secret.txt'), join(root, 'secret-link.txt'))
    await expect(storage.get('escape/secret.txt')).rejects.toBeInstanceOf(InvalidPathError)
    await expect(storage.get('secret-link.txt')).rejects.toBeInstanceOf(InvalidPathError)
    await expect(storage.getStream('secret-link.txt')).rejects.toBeInstanceOf(InvalidPathError)
    await expect(storage.metadata('escape/secret.txt')).rejects.toBeInstanceOf(InvalidPathError)
    await expect(storage.exists('escape/secret.txt')).rejects.toBeInstanceOf(InvalidPathError)
    await expect(storage.copy('secret-link.txt', 'inside/copy.txt')).rejects.toBeInstanceOf(
      InvalidPathError,
    )
    await expect(storage.put('escape/planted.txt', 'x')).rejects.toBeInstanceOf(InvalidPathError)
    await expect(storage.put('escape/new-dir/planted.txt', 'x')).rejects.toBeInstanceOf(
      InvalidPathError,
    )
    await expect(storage.makeDirectory('escape/new-dir')).rejects.toBeInstanceOf(InvalidPathError)
    await expect(storage.files('escape')).rejects.toBeInstanceOf(InvalidPathError)
    await expect(storage.delete('escape/secret.txt')).rejects.toBeInstanceOf(InvalidPathError)
    await expect(storage.deleteDirectory('escape/x')).rejects.toBeInstanceOf(InvalidPathError)
    expect((await readdir(outside)).sort()).toEqual(['secret.txt'])
    // Deleting the link itself removes the link, never the target.
    await storage.deleteDirectory('escape')
    expect((await readdir(outside)).sort()).toEqual(['secret.txt'])
  })

  it('follows symbolic links that stay inside the root', async () => {
    await storage.put('real/file.txt', 'inside')
    await symlink(join(root, 'real'), join(root, 'alias'))
    expect(await storage.getString('alias/file.txt')).toBe('inside')
  })

  it('writes through a temporary file that listings never show', async () => {
    const slow = new Readable({ read() {} })
    const writing = storage.put('slow.txt', slow)
    slow.push('part one, ')
    await new Promise((resolve) => setTimeout(resolve, 20))
    const during = await readdir(root)
    expect(during.some((name) => name.endsWith('.kiln-tmp'))).toBe(true)
    expect(during).not.toContain('slow.txt')
    expect(await storage.files()).toEqual([])
    expect(await storage.exists('slow.txt')).toBe(false)
    slow.push('part two')
    slow.push(null)
    await writing
    expect(await storage.getString('slow.txt')).toBe('part one, part two')
    expect(await readdir(root)).toEqual(['slow.txt'])
  })

  it('maps visibility to file modes', async () => {
    await storage.putWithOptions('pub.txt', 'x', { visibility: 'Public' })
    await storage.putWithOptions('priv.txt', 'x', { visibility: 'Private' })
    expect((await stat(join(root, 'pub.txt'))).mode & 0o777).toBe(0o644)
    expect((await stat(join(root, 'priv.txt'))).mode & 0o777).toBe(0o600)
  })

  it('answers InvalidPathError when a parent is a file, or the target is a directory', async () => {
    await storage.put('file.txt', 'x')
    await storage.makeDirectory('dir')
    await expect(storage.put('file.txt/child.txt', 'x')).rejects.toBeInstanceOf(InvalidPathError)
    await expect(storage.put('dir', 'x')).rejects.toBeInstanceOf(InvalidPathError)
    await expect(storage.makeDirectory('file.txt')).rejects.toBeInstanceOf(InvalidPathError)
    expect(await storage.getString('file.txt')).toBe('x')
  })

  it('serves signed temporary URLs from the disk through storageRoutes', async () => {
    const clock = new ManualClock()
    const signed = createStorage({
      default: 'local',
      disks: { local: { driver: local(root) } },
      temporaryUrls: {
        secret: 'another-signing-secret-with-32-characters!',
        baseUrl: 'http://localhost/signed',
        clock,
      },
    })
    const content = Buffer.alloc(3 * 1024 * 1024, 7)
    await signed.put('media/clip.mp4', content)
    const app = new Hono().route('/signed', storageRoutes({ storage: signed }))
    const url = new URL(await signed.temporaryUrl('media/clip.mp4', 60))
    const response = await app.request(url.pathname + url.search)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('video/mp4')
    expect(Buffer.from(await response.arrayBuffer()).equals(content)).toBe(true)
  })
})
