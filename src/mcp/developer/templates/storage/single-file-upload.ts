import { randomUUID } from 'node:crypto'
import { extname } from 'node:path'
import { Hono } from 'hono'
import type { Storage } from 'kilnjs/storage'

/** Largest accepted upload, in bytes. */
const MAX_BYTES = 10 * 1024 * 1024

/**
 * POST /uploads with a multipart field `file`: stores the file on the `public` disk under a
 * random name and answers 201 `{ path, url }`.
 */
export function uploadRoutes(storage: Storage): Hono {
  const app = new Hono()
  app.post('/uploads', async (c) => {
    const body = await c.req.parseBody()
    const file = body.file
    if (!(file instanceof File)) {
      return c.json({ error: 'Send the file in a multipart field named "file"' }, 422)
    }
    if (file.size === 0 || file.size > MAX_BYTES) {
      return c.json({ error: `The file must be between 1 byte and ${MAX_BYTES} bytes` }, 422)
    }
    const extension = extname(file.name)
      .toLowerCase()
      .replace(/[^.a-z0-9]/g, '')
    const path = `uploads/${randomUUID()}${extension}`
    const disk = storage.disk('public')
    await disk.putWithOptions(path, file.stream(), {
      contentType: file.type || 'application/octet-stream',
      visibility: 'Public',
    })
    return c.json({ path, url: disk.url(path) }, 201)
  })
  return app
}
