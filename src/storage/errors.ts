import { KilnError } from '../core/errors.ts'

/** The file does not exist on the disk (or the path names a directory). */
export class FileNotFound extends KilnError {
  override readonly code = 'file_not_found'
  readonly path: string

  constructor(path: string, options?: { cause?: unknown }) {
    super(`File not found: ${path}`, options)
    this.path = path
  }
}

/** The path is absolute, escapes the disk root, holds a NUL byte or conflicts with a directory. */
export class InvalidPath extends KilnError {
  override readonly code = 'invalid_path'

  constructor(reason: string) {
    super(`Invalid path: ${reason}`)
  }
}

/** No disk of that name is configured. */
export class UnknownDisk extends KilnError {
  override readonly code = 'unknown_disk'
  readonly disk: string

  constructor(disk: string, known: string[]) {
    super(`Unknown disk "${disk}" (configured: ${known.join(', ') || 'none'})`)
    this.disk = disk
  }
}

/** The disk cannot do this (a URL without a URL base, a temporary URL without signing, …). */
export class Unsupported extends KilnError {
  override readonly code = 'storage_unsupported'
}

/** A real I/O failure of the underlying filesystem or object store. Logged with its cause. */
export class StorageIo extends KilnError {
  override readonly code = 'storage_io'
}
