import { Readable } from 'node:stream'
import { type Clock, systemClock } from '../core/clock.ts'
import {
  type Content,
  collect,
  type Disk,
  type FileMetadata,
  isByteSource,
  type PutOptions,
  toBuffer,
  toReadable,
  type Visibility,
} from './disk.ts'
import { FileNotFoundError } from './errors.ts'
import { mimeTypeOf } from './mime.ts'
import { parentOf } from './path.ts'

interface StoredFile {
  data: Buffer
  contentType: string | undefined
  lastModified: Date
  visibility: Visibility
}

/** Options of `memory`. */
export interface MemoryDiskOptions {
  clock?: Clock
}

/**
 * A disk held in this process's memory: for tests and throw-away work.
 * @example
 * ```ts
 * const storage = createStorage({ default: 'scratch', disks: { scratch: { driver: memory() } } })
 * ```
 */
export function memory(options: MemoryDiskOptions = {}): Disk {
  return new MemoryDisk(options.clock ?? systemClock)
}

class MemoryDisk implements Disk {
  readonly driver = 'memory'
  readonly #files = new Map<string, StoredFile>()
  /** Directories made explicitly; directories holding files exist implicitly. */
  readonly #directories = new Set<string>()
  readonly #clock: Clock

  constructor(clock: Clock) {
    this.#clock = clock
  }

  async put(path: string, content: Content, options: PutOptions): Promise<void> {
    const data = isByteSource(content)
      ? Buffer.from(toBuffer(content))
      : await collect(toReadable(content))
    this.#files.set(path, {
      data,
      contentType: options.contentType ?? mimeTypeOf(path),
      lastModified: new Date(this.#clock.now()),
      visibility: options.visibility ?? 'Private',
    })
  }

  async get(path: string): Promise<Buffer> {
    return Buffer.from(this.#file(path).data)
  }

  async getStream(path: string): Promise<Readable> {
    const data = this.#file(path).data
    const chunk = 64 * 1024
    return Readable.from(
      (function* () {
        for (let i = 0; i < data.length; i += chunk) yield data.subarray(i, i + chunk)
      })(),
    )
  }

  async exists(path: string): Promise<boolean> {
    return this.#files.has(path)
  }

  async delete(path: string): Promise<void> {
    this.#files.delete(path)
  }

  async copy(from: string, to: string): Promise<void> {
    const file = this.#file(from)
    this.#files.set(to, { ...file, data: Buffer.from(file.data) })
  }

  async rename(from: string, to: string): Promise<void> {
    const file = this.#file(from)
    this.#files.delete(from)
    this.#files.set(to, file)
  }

  async metadata(path: string): Promise<FileMetadata> {
    const file = this.#file(path)
    return {
      path,
      size: file.data.length,
      mimeType: file.contentType,
      lastModified: new Date(file.lastModified),
      visibility: file.visibility,
    }
  }

  async files(directory: string, recursive: boolean): Promise<string[]> {
    const prefix = directory === '' ? '' : `${directory}/`
    return [...this.#files.keys()]
      .filter((path) => path.startsWith(prefix) && (recursive || parentOf(path) === directory))
      .sort()
  }

  async directories(directory: string): Promise<string[]> {
    const found = new Set<string>()
    const prefix = directory === '' ? '' : `${directory}/`
    for (const path of [...this.#files.keys(), ...this.#directories]) {
      if (!path.startsWith(prefix)) continue
      const rest = path.slice(prefix.length)
      const slash = rest.indexOf('/')
      if (slash > 0) found.add(prefix + rest.slice(0, slash))
      else if (this.#directories.has(path) && rest !== '') found.add(path)
    }
    return [...found].sort()
  }

  async makeDirectory(path: string): Promise<void> {
    let current = path
    while (current !== '') {
      this.#directories.add(current)
      current = parentOf(current)
    }
  }

  async deleteDirectory(path: string): Promise<void> {
    const prefix = `${path}/`
    for (const key of [...this.#files.keys()]) if (key.startsWith(prefix)) this.#files.delete(key)
    for (const dir of [...this.#directories]) {
      if (dir === path || dir.startsWith(prefix)) this.#directories.delete(dir)
    }
  }

  #file(path: string): StoredFile {
    const file = this.#files.get(path)
    if (!file) throw new FileNotFoundError(path)
    return file
  }
}
