import { Hono } from 'hono'
import { createStorageFromEnv, type Storage, storageRoutes } from 'kilnjs/storage'

/**
 * Storage whose private files can be shared through expiring links: S3 disks presign, the
 * local disks are signed by kiln and served by `storageRoutes` at `/storage/signed`.
 */
export function createSharingStorage(appUrl: string, secret: string): Storage {
  return createStorageFromEnv(process.env, {
    temporaryUrls: { secret, baseUrl: `${appUrl}/storage/signed` },
  })
}

/**
 * GET /files/:path/link?minutes=15: answers `{ url, expires_at }`, a link to a private file
 * that works for the given minutes (1 to 60, default 15); 404 when the file does not exist.
 */
export function temporaryUrlRoutes(storage: Storage): Hono {
  const app = new Hono()
  app.route('/storage/signed', storageRoutes({ storage }))
  app.get('/files/:path{.+}/link', async (c) => {
    const path = c.req.param('path')
    const minutes = Math.min(60, Math.max(1, Number(c.req.query('minutes') ?? 15) || 15))
    if (!(await storage.exists(path))) return c.json({ error: 'Not Found' }, 404)
    const expiresAt = new Date(Date.now() + minutes * 60_000)
    const url = await storage.temporaryUrl(path, minutes * 60)
    return c.json({ url, expires_at: expiresAt.toISOString() })
  })
  return app
}
