import { KilnError } from '../core/errors.ts'

/** The file does not exist on the disk (or the path names a directory). */
export class FileNotFoundError extends KilnError {
  override readonly code = 'file_not_found'
  readonly path: string

  constructor(path: string, options?: { cause?: unknown }) {
    super(`File not found: ${path}`, options)
    this.path = path
  }
}

/** The path is absolute, escapes the disk root, holds a NUL byte or conflicts with a directory. */
export class InvalidPathError extends KilnError {
  override readonly code = 'invalid_path'

  constructor(reason: string) {
    super(`Invalid path: ${reason}`)
  }
}

/** No disk of that name is configured. */
export class UnknownDiskError extends KilnError {
  override readonly code = 'unknown_disk'
  readonly disk: string

  constructor(disk: string, known: string[]) {
    super(`Unknown disk "${disk}" (configured: ${known.join(', ') || 'none'})`)
    this.disk = disk
  }
}

/** The disk cannot do this (a URL without a URL base, a temporary URL without signing, …). */
export class StorageUnsupportedError extends KilnError {
  override readonly code = 'storage_unsupported'
}

/** A real I/O failure of the underlying filesystem or object store. Logged with its cause. */
export class StorageIoError extends KilnError {
  override readonly code = 'storage_io'
}

/** @deprecated Renamed `FileNotFoundError`; this name goes in the next minor version. */
export const FileNotFound = FileNotFoundError
/** @deprecated Renamed `FileNotFoundError`. */
export type FileNotFound = FileNotFoundError
/** @deprecated Renamed `InvalidPathError`; this name goes in the next minor version. */
export const InvalidPath = InvalidPathError
/** @deprecated Renamed `InvalidPathError`. */
export type InvalidPath = InvalidPathError
/** @deprecated Renamed `UnknownDiskError`; this name goes in the next minor version. */
export const UnknownDisk = UnknownDiskError
/** @deprecated Renamed `UnknownDiskError`. */
export type UnknownDisk = UnknownDiskError
/** @deprecated Renamed `StorageUnsupportedError`; this name goes in the next minor version. */
export const Unsupported = StorageUnsupportedError
/** @deprecated Renamed `StorageUnsupportedError`. */
export type Unsupported = StorageUnsupportedError
/** @deprecated Renamed `StorageIoError`; this name goes in the next minor version. */
export const StorageIo = StorageIoError
/** @deprecated Renamed `StorageIoError`. */
export type StorageIo = StorageIoError
