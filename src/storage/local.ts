import { randomBytes } from 'node:crypto'
import { createWriteStream, readlinkSync, type Stats } from 'node:fs'
import * as fs from 'node:fs/promises'
import { dirname, join, resolve, sep } from 'node:path'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import {
  type Content,
  type Disk,
  type FileMetadata,
  isByteSource,
  type PutOptions,
  toBuffer,
  toReadable,
} from './disk.ts'
import { FileNotFoundError, InvalidPathError, StorageIoError } from './errors.ts'
import { mimeTypeOf } from './mime.ts'

/** Temporary files of in-flight writes: hidden from listings, renamed over the target when complete. */
const TEMP_FILE = /^\.[0-9a-f]{16}\.kiln-tmp$/

const MODES = { Public: 0o644, Private: 0o600 } as const

/** Whether /proc/self/fd names open files (Linux); checked on first use. */
let procFd = process.platform === 'linux'

/**
 * A disk on the local filesystem under `root` (created on first use). Writes are atomic: the
 * content goes to a temporary file in the target's directory, which is then renamed over the
 * target, so readers and a crash never see half a file and concurrent writes to one path end
 * with one complete file. Every path is confined to the root, symbolic links included.
 * @example
 * ```ts
 * const storage = createStorage({
 *   default: 'local',
 *   disks: { local: { driver: local('./storage'), url: '/files' } },
 * })
 * ```
 */
export function local(root: string): Disk {
  if (typeof root !== 'string' || root === '') {
    throw new TypeError('local(root): expected the path of the disk root directory')
  }
  return new LocalDisk(resolve(root))
}

class LocalDisk implements Disk {
  readonly driver = 'local'
  readonly #root: string
  #realRoot: Promise<string> | undefined

  constructor(root: string) {
    this.#root = root
  }

  async put(path: string, content: Content, options: PutOptions): Promise<void> {
    const dir = await this.#directoryForWrite(path)
    const target = join(dir, basename(path))
    const temp = join(dir, `.${randomBytes(8).toString('hex')}.kiln-tmp`)
    const mode = options.visibility ? MODES[options.visibility] : undefined
    try {
      if (isByteSource(content)) {
        await fs.writeFile(temp, toBuffer(content), { mode })
      } else {
        await pipeline(toReadable(content), createWriteStream(temp, { mode }))
      }
      await fs.rename(temp, target)
    } catch (error) {
      await fs.rm(temp, { force: true }).catch(() => {})
      if (code(error) === 'EISDIR' || code(error) === 'ENOTEMPTY') {
        throw new InvalidPathError(`${path} is a directory`)
      }
      if (code(error) === 'ENOTDIR') throw new InvalidPathError(`a parent of ${path} is a file`)
      throw ioError('write', path, error)
    }
  }

  async get(path: string): Promise<Buffer> {
    const handle = await this.#open(path)
    try {
      return await handle.readFile()
    } catch (error) {
      throw readError(path, error)
    } finally {
      await handle.close()
    }
  }

  async getStream(path: string): Promise<Readable> {
    const handle = await this.#open(path)
    try {
      if (!(await handle.stat()).isFile()) throw new FileNotFoundError(path)
    } catch (error) {
      await handle.close()
      throw readError(path, error)
    }
    return handle.createReadStream({ autoClose: true, highWaterMark: 256 * 1024 })
  }

  async exists(path: string): Promise<boolean> {
    try {
      const real = await this.#existing(path)
      return (await fs.stat(real)).isFile()
    } catch (error) {
      if (error instanceof FileNotFoundError) return false
      if (error instanceof InvalidPathError) throw error
      throw readError(path, error)
    }
  }

  async delete(path: string): Promise<void> {
    const dir = await this.#existingParent(path)
    if (dir === undefined) return
    try {
      await fs.unlink(join(dir, basename(path)))
    } catch (error) {
      if (['ENOENT', 'EISDIR', 'ENOTDIR'].includes(code(error) ?? '')) return
      if (code(error) === 'EPERM' && (await isDirectory(join(dir, basename(path))))) return
      throw ioError('delete', path, error)
    }
  }

  async copy(from: string, to: string): Promise<void> {
    const source = await this.#existing(from)
    await this.#assertFile(source, from)
    const dir = await this.#directoryForWrite(to)
    const temp = join(dir, `.${randomBytes(8).toString('hex')}.kiln-tmp`)
    try {
      await fs.copyFile(source, temp)
      await fs.rename(temp, join(dir, basename(to)))
    } catch (error) {
      await fs.rm(temp, { force: true }).catch(() => {})
      if (code(error) === 'EISDIR') throw new InvalidPathError(`${to} is a directory`)
      if (code(error) === 'ENOTDIR') throw new InvalidPathError(`a parent of ${to} is a file`)
      throw readError(from, error)
    }
  }

  async rename(from: string, to: string): Promise<void> {
    const sourceDir = await this.#existingParent(from)
    if (sourceDir === undefined) throw new FileNotFoundError(from)
    const source = join(sourceDir, basename(from))
    await this.#assertFile(source, from)
    const dir = await this.#directoryForWrite(to)
    try {
      await fs.rename(source, join(dir, basename(to)))
    } catch (error) {
      if (code(error) === 'EISDIR') throw new InvalidPathError(`${to} is a directory`)
      if (code(error) === 'ENOTDIR') throw new InvalidPathError(`a parent of ${to} is a file`)
      throw readError(from, error)
    }
  }

  async metadata(path: string): Promise<FileMetadata> {
    const handle = await this.#open(path)
    let stats: Stats
    try {
      stats = await handle.stat()
    } catch (error) {
      throw readError(path, error)
    } finally {
      await handle.close()
    }
    if (!stats.isFile()) throw new FileNotFoundError(path)
    return {
      path,
      size: stats.size,
      mimeType: mimeTypeOf(path),
      lastModified: new Date(stats.mtimeMs),
      visibility: (stats.mode & 0o004) !== 0 ? 'Public' : 'Private',
    }
  }

  async files(directory: string, recursive: boolean): Promise<string[]> {
    const real = await this.#existingDirectory(directory)
    if (real === undefined) return []
    const found: string[] = []
    const walk = async (abs: string, rel: string): Promise<void> => {
      for (const entry of await fs.readdir(abs, { withFileTypes: true })) {
        const relPath = rel === '' ? entry.name : `${rel}/${entry.name}`
        if (entry.isFile() && !TEMP_FILE.test(entry.name)) found.push(relPath)
        else if (recursive && entry.isDirectory()) await walk(join(abs, entry.name), relPath)
      }
    }
    try {
      await walk(real, directory)
    } catch (error) {
      throw ioError('list', directory, error)
    }
    return found.sort()
  }

  async directories(directory: string): Promise<string[]> {
    const real = await this.#existingDirectory(directory)
    if (real === undefined) return []
    try {
      const entries = await fs.readdir(real, { withFileTypes: true })
      return entries
        .filter((entry) => entry.isDirectory())
        .map((entry) => (directory === '' ? entry.name : `${directory}/${entry.name}`))
        .sort()
    } catch (error) {
      throw ioError('list', directory, error)
    }
  }

  async makeDirectory(path: string): Promise<void> {
    const real = await this.#ensureDirectory(path)
    if (!(await isDirectory(real))) throw new InvalidPathError(`${path} is a file, not a directory`)
  }

  async deleteDirectory(path: string): Promise<void> {
    const dir = await this.#existingParent(path)
    if (dir === undefined) return
    const target = join(dir, basename(path))
    try {
      const stats = await fs.lstat(target)
      if (stats.isSymbolicLink()) await fs.unlink(target)
      else if (stats.isDirectory()) await fs.rm(target, { recursive: true, force: true })
    } catch (error) {
      if (code(error) === 'ENOENT') return
      throw ioError('delete directory', path, error)
    }
  }

  /** The real root, created on first use. */
  #rootReal(): Promise<string> {
    this.#realRoot ??= fs
      .mkdir(this.#root, { recursive: true })
      .then(() => fs.realpath(this.#root))
      .catch((error: unknown) => {
        this.#realRoot = undefined
        throw new StorageIoError('The local disk root cannot be created', { cause: error })
      })
    return this.#realRoot
  }

  /** Resolves `real` (a realpath) and refuses anything outside the root. */
  async #confine(real: string, path: string): Promise<string> {
    const root = await this.#rootReal()
    if (real !== root && !real.startsWith(root.endsWith(sep) ? root : root + sep)) {
      throw new InvalidPathError(`${path || '(root)'} resolves outside the disk root`)
    }
    return real
  }

  /**
   * Opens an existing file for reading and checks where the opened file really is, so no
   * symbolic link can lead a read out of the root (and no rename can swap the file between
   * the check and the read). Linux names an open descriptor's file in /proc/self/fd.
   */
  async #open(path: string): Promise<fs.FileHandle> {
    const root = await this.#rootReal()
    const abs = join(this.#root, path)
    let handle: fs.FileHandle
    try {
      handle = await fs.open(abs, 'r')
    } catch (error) {
      throw readError(path, error)
    }
    try {
      let real: string | undefined
      if (procFd) {
        // Synchronous on purpose: a /proc readlink is answered from kernel memory and never
        // waits on the disk, and skipping a thread-pool round trip keeps reads near raw speed.
        try {
          real = readlinkSync(`/proc/self/fd/${handle.fd}`)
        } catch {
          procFd = false
        }
        if (real !== undefined && !real.startsWith('/')) procFd = false
      }
      if (!procFd || real === undefined) real = await fs.realpath(abs)
      if (!real.startsWith(root.endsWith(sep) ? root : root + sep)) {
        throw new InvalidPathError(`${path} resolves outside the disk root`)
      }
      return handle
    } catch (error) {
      await handle.close()
      throw readError(path, error)
    }
  }

  /** The real path of an existing entry: FileNotFoundError when missing, InvalidPathError when outside. */
  async #existing(path: string): Promise<string> {
    await this.#rootReal()
    let real: string
    try {
      real = await fs.realpath(join(this.#root, path))
    } catch (error) {
      throw readError(path, error)
    }
    return this.#confine(real, path)
  }

  async #existingDirectory(path: string): Promise<string | undefined> {
    try {
      const real = await this.#existing(path)
      return (await fs.stat(real)).isDirectory() ? real : undefined
    } catch (error) {
      if (error instanceof FileNotFoundError) return undefined
      throw error
    }
  }

  /** The real parent directory of `path`, or undefined when it does not exist. */
  async #existingParent(path: string): Promise<string | undefined> {
    const parent = dirname(path)
    try {
      return await this.#existing(parent === '.' ? '' : parent)
    } catch (error) {
      if (error instanceof FileNotFoundError) return undefined
      throw error
    }
  }

  async #assertFile(real: string, path: string) {
    try {
      const stats = await fs.stat(real)
      if (!stats.isFile()) throw new FileNotFoundError(path)
      return stats
    } catch (error) {
      throw readError(path, error)
    }
  }

  /** The real directory a write of `path` goes into, created (inside the root) when missing. */
  async #directoryForWrite(path: string): Promise<string> {
    const parent = dirname(path)
    return this.#ensureDirectory(parent === '.' ? '' : parent)
  }

  async #ensureDirectory(path: string): Promise<string> {
    try {
      return await this.#existing(path)
    } catch (error) {
      if (!(error instanceof FileNotFoundError)) throw error
    }
    // Confine the nearest existing ancestor first, so a symbolic link never makes mkdir
    // create directories outside the root.
    const parent = dirname(path)
    await this.#ensureDirectory(parent === '.' ? '' : parent)
    try {
      await fs.mkdir(join(this.#root, path))
    } catch (error) {
      if (code(error) === 'ENOTDIR') throw new InvalidPathError(`a parent of ${path} is a file`)
      if (code(error) !== 'EEXIST') throw ioError('create directory', path, error)
    }
    const real = await this.#existing(path)
    if (!(await isDirectory(real))) throw new InvalidPathError(`${path} is a file, not a directory`)
    return real
  }
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1)
}

function code(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code
}

async function isDirectory(abs: string): Promise<boolean> {
  try {
    return (await fs.stat(abs)).isDirectory()
  } catch {
    return false
  }
}

function readError(path: string, error: unknown): Error {
  if (error instanceof FileNotFoundError || error instanceof InvalidPathError) return error
  if (['ENOENT', 'ENOTDIR', 'EISDIR'].includes(code(error) ?? '')) {
    return new FileNotFoundError(path, { cause: error })
  }
  return ioError('read', path, error)
}

function ioError(operation: string, path: string, error: unknown): Error {
  if (
    error instanceof FileNotFoundError ||
    error instanceof InvalidPathError ||
    error instanceof StorageIoError
  ) {
    return error
  }
  return new StorageIoError(`Could not ${operation} ${path || '(root)'}`, { cause: error })
}
