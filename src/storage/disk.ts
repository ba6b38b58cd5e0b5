import { Readable } from 'node:stream'
import type { ReadableStream as WebReadableStream } from 'node:stream/web'

/** Whether a file may be served by a public URL. */
export type Visibility = 'Private' | 'Public'

/** Options of `put`. */
export interface PutOptions {
  visibility?: Visibility
  /** Stored as the object's content type; derived from the extension when omitted. */
  contentType?: string
}

/**
 * What can be stored: text (UTF-8), bytes, or a stream of bytes (a Node `Readable`, a web
 * `ReadableStream`, any async iterable of chunks). Streams are written as they arrive, so a
 * large file never sits whole in memory.
 */
export type Content =
  | string
  | Uint8Array
  | Readable
  | WebReadableStream<Uint8Array>
  | ReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array>

/** What a disk knows of a file. */
export interface FileMetadata {
  path: string
  /** Size in bytes. */
  size: number
  mimeType: string | undefined
  lastModified: Date
  /** Known when the disk records it. */
  visibility?: Visibility
}

/**
 * A storage driver: the small set of operations each backend implements. Paths given to a
 * disk are already normalized (`a/b.txt`, no leading slash; `''` is the root directory).
 * The `Storage` facade adds strings, URLs and path checks on top.
 */
export interface Disk {
  readonly driver: string
  put(path: string, content: Content, options: PutOptions): Promise<void>
  get(path: string): Promise<Buffer>
  getStream(path: string): Promise<Readable>
  exists(path: string): Promise<boolean>
  /** Removes the file; a missing file is not an error. */
  delete(path: string): Promise<void>
  copy(from: string, to: string): Promise<void>
  rename(from: string, to: string): Promise<void>
  metadata(path: string): Promise<FileMetadata>
  /** Files under `directory`, as disk-relative paths, sorted. */
  files(directory: string, recursive: boolean): Promise<string[]>
  /** Immediate subdirectories of `directory`, as disk-relative paths, sorted. */
  directories(directory: string): Promise<string[]>
  makeDirectory(path: string): Promise<void>
  /** Removes the directory and everything under it; a missing directory is not an error. */
  deleteDirectory(path: string): Promise<void>
  /** A URL the driver can mint on its own (a presigned object-store URL). */
  temporaryUrl?(path: string, expiresInSeconds: number): Promise<string>
  /** The driver's own public URL when no URL base is configured (the object-store URL). */
  url?(path: string): string
  close?(): Promise<void>
}

export function isByteSource(content: Content): content is string | Uint8Array {
  return typeof content === 'string' || content instanceof Uint8Array
}

/** Bytes for a string or bytes; streams stay streams. */
export function toBuffer(content: string | Uint8Array): Buffer {
  if (typeof content === 'string') return Buffer.from(content, 'utf8')
  return Buffer.isBuffer(content)
    ? content
    : Buffer.from(content.buffer, content.byteOffset, content.byteLength)
}

/** Any content as a Node `Readable`. */
export function toReadable(content: Content): Readable {
  if (isByteSource(content)) return Readable.from([toBuffer(content)])
  if (content instanceof Readable) return content
  if (typeof (content as ReadableStream).getReader === 'function') {
    return Readable.fromWeb(content as WebReadableStream<Uint8Array>)
  }
  return Readable.from(content as AsyncIterable<Uint8Array>)
}

/** Reads a whole stream into one buffer (for `get` on drivers that only stream). */
export async function collect(stream: AsyncIterable<Uint8Array | string>): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : toBuffer(chunk))
  }
  return Buffer.concat(chunks)
}
