import { Readable } from 'node:stream'
import { Hono } from 'hono'
import { FILE_SECURITY_HEADERS } from '../core/http/security-headers.ts'
import { errorHandler } from '../core/http-errors.ts'
import { type Logger, silentLogger } from '../core/logger.ts'
import { FileNotFoundError, InvalidPathError } from './errors.ts'
import { normalizePath } from './path.ts'
import type { Storage } from './storage.ts'

/** Options of `publicDiskRoutes`. */
export interface PublicDiskRoutesOptions {
  storage: Storage
  /** The disk served (default `public`). */
  disk?: string
  /** `Cache-Control` of every file (default one hour, then revalidated by ETag). */
  cacheControl?: string
  logger?: Logger
}

/**
 * Serves a disk's files at its URL base, as Laravel's `storage:link` does:
 * `app.route('/storage', publicDiskRoutes({ storage }))` answers `GET /storage/avatars/a.png`.
 * GET and HEAD only, with the file's content type, `Content-Length`, `Last-Modified`, a weak
 * `ETag` (304 on `If-None-Match` / `If-Modified-Since`) and `Cache-Control`. A path that is not
 * a file of the disk (a `..` escape, however encoded, a NUL byte, a backslash, a symlink out
 * of the root) answers 404, as a missing file does.
 * @example
 * ```ts
 * app.route('/storage', publicDiskRoutes({ storage, logger }))
 * ```
 */
export function publicDiskRoutes(options: PublicDiskRoutesOptions): Hono {
  const { storage, logger = silentLogger() } = options
  if (!storage) throw new TypeError('publicDiskRoutes: `storage` is required')
  const disk = storage.disk(options.disk ?? 'public')
  const cacheControl = options.cacheControl ?? 'public, max-age=3600'
  const app = new Hono()
  app.onError(errorHandler({ logger }))
  app.get('/:path{.+}', async function servePublicFile(c) {
    const path = await notFoundIfInvalid(async () => normalizePath(c.req.param('path')))
    // The disk refuses a symlink out of its root with InvalidPathError: to a visitor, no such file.
    const meta = await notFoundIfInvalid(() => disk.metadata(path))
    const etag = `W/"${meta.size.toString(16)}-${Math.floor(meta.lastModified.getTime()).toString(16)}"`
    const headers: Record<string, string> = {
      'Content-Type': meta.mimeType ?? 'application/octet-stream',
      'Last-Modified': meta.lastModified.toUTCString(),
      ETag: etag,
      'Cache-Control': cacheControl,
      ...FILE_SECURITY_HEADERS,
    }
    if (notModified(c.req.raw.headers, etag, meta.lastModified)) {
      return new Response(null, { status: 304, headers })
    }
    headers['Content-Length'] = String(meta.size)
    if (c.req.method === 'HEAD') return new Response(null, { status: 200, headers })
    const stream = await notFoundIfInvalid(() => disk.getStream(path))
    return new Response(Readable.toWeb(stream) as ReadableStream<Uint8Array>, { headers })
  })
  return app
}

async function notFoundIfInvalid<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    if (error instanceof InvalidPathError) throw new FileNotFoundError('')
    throw error
  }
}

/** RFC 9110 §13.1: `If-None-Match` wins over `If-Modified-Since` when both are sent. */
function notModified(headers: Headers, etag: string, lastModified: Date): boolean {
  const ifNoneMatch = headers.get('if-none-match')
  if (ifNoneMatch !== null) {
    const weak = (tag: string) => tag.trim().replace(/^W\//, '')
    return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || weak(tag) === weak(etag))
  }
  const since = Date.parse(headers.get('if-modified-since') ?? '')
  return Number.isFinite(since) && Math.floor(lastModified.getTime() / 1000) * 1000 <= since
}
