import { Readable } from 'node:stream'
import { Hono } from 'hono'
import { ForbiddenError } from '../core/errors.ts'
import { FILE_SECURITY_HEADERS } from '../core/http/security-headers.ts'
import { errorHandler } from '../core/http-errors.ts'
import { type Logger, silentLogger } from '../core/logger.ts'
import { FileNotFoundError, UnknownDiskError } from './errors.ts'
import { normalizePath } from './path.ts'
import type { Storage } from './storage.ts'

/** Options of `storageRoutes`. */
export interface StorageRoutesOptions {
  /** A storage created with `temporaryUrls`; its secret and clock check the signatures. */
  storage: Storage
  /** Where 5xx failures are logged. */
  logger?: Logger
}

/**
 * Serves kiln-signed temporary URLs: `GET /:disk/:path?expires=…&signature=…`. Mount it at the
 * `temporaryUrls.baseUrl` path: `app.route('/storage/signed', storageRoutes({ storage }))`.
 * A missing, altered or expired signature answers 403 before the disk is touched.
 * @example
 * ```ts
 * app.route('/files/signed', storageRoutes({ storage, logger }))
 * ```
 */
export function storageRoutes({ storage, logger = silentLogger() }: StorageRoutesOptions): Hono {
  if (!storage?.signsUrls) {
    throw new TypeError('storageRoutes: the storage needs temporaryUrls ({ secret, baseUrl })')
  }
  const app = new Hono()
  app.onError(errorHandler({ logger }))
  app.get('/:disk/:path{.+}', async function serveTemporaryUrl(c) {
    const diskName = c.req.param('disk')
    const expires = c.req.query('expires') ?? ''
    const signature = c.req.query('signature') ?? ''
    const path = normalizePath(c.req.param('path'))
    const check = storage.checkSignature(diskName, path, expires, signature)
    if (check === 'expired') throw new ForbiddenError('This link has expired')
    if (check !== 'valid') throw new ForbiddenError('Invalid signature')
    let disk: ReturnType<Storage['disk']>
    try {
      disk = storage.disk(diskName)
    } catch (error) {
      if (error instanceof UnknownDiskError) throw new FileNotFoundError(path)
      throw error
    }
    const meta = await disk.metadata(path)
    const stream = await disk.getStream(path)
    const remaining = Math.max(0, Number(expires) - Math.floor(storage.now() / 1000))
    return new Response(Readable.toWeb(stream) as ReadableStream<Uint8Array>, {
      status: 200,
      headers: {
        'Content-Type': meta.mimeType ?? 'application/octet-stream',
        'Content-Length': String(meta.size),
        'Last-Modified': meta.lastModified.toUTCString(),
        'Cache-Control': `private, max-age=${Math.min(remaining, 3600)}`,
        ...FILE_SECURITY_HEADERS,
      },
    })
  })
  return app
}
