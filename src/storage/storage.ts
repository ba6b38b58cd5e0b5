import type { Readable } from 'node:stream'
import type { Clock } from '../core/clock.ts'
import type { Secret } from '../core/secret.ts'
import type { Content, Disk, FileMetadata, PutOptions, Visibility } from './disk.ts'
import { InvalidPathError, StorageUnsupportedError, UnknownDiskError } from './errors.ts'
import { encodePath, joinUrl, normalizePath } from './path.ts'
import { UrlSigner } from './signing.ts'

/** One named disk of a storage: its driver and its URL bases. */
export interface DiskConfig {
  driver: Disk
  /** URL base for `url()`, e.g. `https://app.example.com/storage` or `/storage`. */
  url?: string
  /** CDN base for `cdnUrl()`, e.g. `https://cdn.example.com`. */
  cdn?: string
}

/** How a storage signs temporary URLs (checked by `storageRoutes`). */
export interface TemporaryUrlOptions {
  /** HMAC key for signed URLs (at least 32 characters). */
  secret: Secret | string
  /** Where `storageRoutes()` is mounted, e.g. `https://app.example.com/storage/signed`. */
  baseUrl: string
  clock?: Clock
}

/** Options of `createStorage`. */
export interface StorageOptions {
  /** Name of the disk that operations without a disk name use. */
  default: string
  disks: Record<string, DiskConfig>
  /**
   * Signed, expiring URLs for disks that cannot presign on their own (local, memory),
   * served by `storageRoutes({ storage })`.
   */
  temporaryUrls?: TemporaryUrlOptions
}

/** Seconds from now, or the moment the URL stops working. */
export type Expiration = number | Date

/**
 * One disk with every storage operation. Paths are disk-relative (`avatars/1.png`); absolute
 * paths, `..` escapes and NUL bytes are refused with `InvalidPathError` before the driver runs.
 */
export class DiskHandle {
  readonly name: string
  readonly driver: Disk
  readonly #config: DiskConfig
  readonly #signer: { signer: UrlSigner; baseUrl: string } | undefined

  constructor(
    name: string,
    config: DiskConfig,
    signer: { signer: UrlSigner; baseUrl: string } | undefined,
  ) {
    this.name = name
    this.driver = config.driver
    this.#config = config
    this.#signer = signer
  }

  /** Stores `content` (text, bytes or a stream) at `path`, replacing any file there. */
  async put(path: string, content: Content): Promise<void> {
    return this.driver.put(file(path), content, {})
  }

  async putWithOptions(path: string, content: Content, options: PutOptions): Promise<void> {
    if (options.visibility !== undefined && !['Private', 'Public'].includes(options.visibility)) {
      throw new TypeError('putWithOptions: visibility must be "Private" or "Public"')
    }
    return this.driver.put(file(path), content, options)
  }

  /** The whole file as bytes. Prefer `getStream` for large files. */
  async get(path: string): Promise<Buffer> {
    return this.driver.get(file(path))
  }

  async getString(path: string, encoding: BufferEncoding = 'utf8'): Promise<string> {
    return (await this.driver.get(file(path))).toString(encoding)
  }

  async getStream(path: string): Promise<Readable> {
    return this.driver.getStream(file(path))
  }

  async exists(path: string): Promise<boolean> {
    return this.driver.exists(file(path))
  }

  /** Removes the file; deleting a missing file is not an error. */
  async delete(path: string): Promise<void> {
    return this.driver.delete(file(path))
  }

  async copy(from: string, to: string): Promise<void> {
    return this.driver.copy(file(from), file(to))
  }

  /** Moves a file, replacing any file at `to`. */
  async rename(from: string, to: string): Promise<void> {
    return this.driver.rename(file(from), file(to))
  }

  async size(path: string): Promise<number> {
    return (await this.driver.metadata(file(path))).size
  }

  async metadata(path: string): Promise<FileMetadata> {
    return this.driver.metadata(file(path))
  }

  async visibility(path: string): Promise<Visibility | undefined> {
    return (await this.driver.metadata(file(path))).visibility
  }

  /** Files directly in `directory` (the root when omitted). */
  async files(directory = ''): Promise<string[]> {
    return this.driver.files(dir(directory), false)
  }

  /** Files in `directory` and all its subdirectories. */
  async allFiles(directory = ''): Promise<string[]> {
    return this.driver.files(dir(directory), true)
  }

  async directories(directory = ''): Promise<string[]> {
    return this.driver.directories(dir(directory))
  }

  async makeDirectory(path: string): Promise<void> {
    return this.driver.makeDirectory(file(path))
  }

  /** Removes the directory and everything in it. The root cannot be deleted this way. */
  async deleteDirectory(path: string): Promise<void> {
    return this.driver.deleteDirectory(file(path))
  }

  /**
   * The file's URL from the disk's URL base (no I/O). A URL path may start with a slash
   * (`url('/img/a.png')`): it collapses into the one between base and path.
   */
  url(path: string): string {
    const normalized = urlPath(path)
    if (this.#config.url) return joinUrl(this.#config.url, encodePath(normalized))
    if (this.driver.url) return this.driver.url(normalized)
    throw new StorageUnsupportedError(`The disk "${this.name}" has no URL base`)
  }

  /** The CDN edge URL when the disk has a CDN base, otherwise `url()`. String composition only. */
  cdnUrl(path: string): string {
    if (this.#config.cdn) return joinUrl(this.#config.cdn, encodePath(urlPath(path)))
    return this.url(path)
  }

  /**
   * A URL that works until `expiration` (seconds from now, or a Date): presigned by the
   * object store on S3 disks (at most 7 days), otherwise signed by kiln and served by
   * `storageRoutes()`.
   */
  async temporaryUrl(path: string, expiration: Expiration): Promise<string> {
    const normalized = file(path)
    const now = this.#signer?.signer.clock.now() ?? Date.now()
    const seconds =
      expiration instanceof Date
        ? Math.floor((expiration.getTime() - now) / 1000)
        : Math.floor(expiration)
    if (!Number.isFinite(seconds) || seconds <= 0) {
      throw new TypeError('temporaryUrl: the expiration must be in the future')
    }
    if (this.driver.temporaryUrl) return this.driver.temporaryUrl(normalized, seconds)
    if (!this.#signer) {
      throw new StorageUnsupportedError(
        `The disk "${this.name}" cannot make temporary URLs: configure temporaryUrls in createStorage`,
      )
    }
    const expires = Math.floor(now / 1000) + seconds
    const signature = this.#signer.signer.sign(this.name, normalized, expires)
    const query = new URLSearchParams({ expires: String(expires), signature })
    return `${joinUrl(this.#signer.baseUrl, `${encodeURIComponent(this.name)}/${encodePath(normalized)}`)}?${query}`
  }
}

/** The storage facade: every operation on the default disk, and `disk(name)` for the others. */
export class Storage extends DiskHandle {
  readonly defaultDisk: string
  readonly #disks: Map<string, DiskHandle>
  readonly #signer: UrlSigner | undefined

  constructor(options: StorageOptions) {
    const signer = options.temporaryUrls
      ? {
          signer: new UrlSigner({
            secret: options.temporaryUrls.secret,
            clock: options.temporaryUrls.clock,
          }),
          baseUrl: options.temporaryUrls.baseUrl,
        }
      : undefined
    const disks = new Map<string, DiskHandle>()
    for (const [name, config] of Object.entries(options.disks ?? {})) {
      if (!config || typeof config.driver?.put !== 'function') {
        throw new TypeError(
          `createStorage: disks.${name}.driver must be a disk (local(), memory(), s3())`,
        )
      }
      disks.set(name, new DiskHandle(name, config, signer))
    }
    const main = disks.get(options.default)
    if (!main) {
      throw new TypeError(
        `createStorage: the default disk "${options.default}" is not among the disks (${[...disks.keys()].join(', ')})`,
      )
    }
    super(main.name, options.disks[options.default]!, signer)
    this.defaultDisk = options.default
    this.#disks = disks
    this.#signer = signer?.signer
  }

  /** The named disk; `UnknownDiskError` when none has that name. */
  disk(name: string): DiskHandle {
    const handle = this.#disks.get(name)
    if (!handle) throw new UnknownDiskError(name, [...this.#disks.keys()])
    return handle
  }

  diskNames(): string[] {
    return [...this.#disks.keys()]
  }

  /** Checks a kiln-signed temporary URL's query (used by `storageRoutes`). */
  checkSignature(disk: string, path: string, expires: string, signature: string) {
    if (!this.#signer) return 'invalid' as const
    return this.#signer.check(disk, path, expires, signature)
  }

  /** The clock of the URL signer (the system clock when none was given). */
  now(): number {
    return this.#signer ? this.#signer.clock.now() : Date.now()
  }

  /** Whether temporary URLs are signed by kiln (`temporaryUrls` configured). */
  get signsUrls(): boolean {
    return this.#signer !== undefined
  }

  async close(): Promise<void> {
    for (const handle of this.#disks.values()) await handle.driver.close?.()
  }
}

/**
 * One file API over the named disks of `options`; `storage.disk(name)` picks one, the
 * default disk otherwise.
 * @example
 * ```ts
 * const storage = createStorage({ default: 'local', disks: { local: { driver: local('./storage') } } })
 * ```
 */
export function createStorage(options: StorageOptions): Storage {
  return new Storage(options)
}

function file(path: string): string {
  return normalizePath(path)
}

/** A file path for URL composition: leading slashes collapse; `..`, NUL and `\` still fail. */
function urlPath(path: string): string {
  if (typeof path !== 'string') throw new InvalidPathError('expected a string')
  return normalizePath(path.replace(/^\/+/, ''))
}

function dir(path: string): string {
  if (typeof path !== 'string') throw new InvalidPathError('expected a string')
  return normalizePath(path, { allowRoot: true })
}
