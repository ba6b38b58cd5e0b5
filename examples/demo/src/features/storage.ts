import { randomBytes } from 'node:crypto'
import { Hono } from 'hono'
import { html } from 'hono/html'
import {
  bodyLimit,
  ConfigError,
  constantTimeEqual,
  PayloadTooLargeError,
  Secret,
  ValidationError,
} from 'kilnjs/core'
import { createStorageFromEnv, publicDiskRoutes, type Storage, storageRoutes } from 'kilnjs/storage'
import type { DemoContext } from '../context.ts'
import { page, pageHeaders } from '../pages/layout.ts'

/** Uploads larger than this answer 413. */
const MAX_UPLOAD_BYTES = 10 * 1024 * 1024
/** How long the links on the /files page work. */
const LINK_SECONDS = 5 * 60

const created = new WeakMap<DemoContext, Storage>()

/**
 * The demo's storage, once per context: the FILESYSTEM_* / OBJSTORE_* disks (the local disk
 * under storage/files unless FILESYSTEM_LOCAL_ROOT says otherwise, so uploads never mix with
 * the embedded database's files), with signed temporary URLs served under /files/signed.
 * STORAGE_URL_SECRET signs them; in development a missing secret is generated (links then
 * stop working at restart and differ between instances), in production it is required.
 */
export function demoStorage(ctx: DemoContext): Storage {
  let storage = created.get(ctx)
  if (!storage) {
    let secret = ctx.env.STORAGE_URL_SECRET
    if (!secret || secret.length < 32) {
      if (ctx.config.env === 'production') {
        throw new ConfigError(
          { STORAGE_URL_SECRET: 'is required in production (at least 32 characters)' },
          'Invalid storage configuration',
        )
      }
      secret = randomBytes(32).toString('base64url')
      ctx.logger.warn(
        'STORAGE_URL_SECRET is not set: signed file links use a generated secret until restart',
      )
    }
    storage = createStorageFromEnv(
      { FILESYSTEM_LOCAL_ROOT: 'storage/files', ...withoutEmpty(ctx.env) },
      {
        temporaryUrls: { secret: new Secret(secret), baseUrl: `${ctx.config.appUrl}/files/signed` },
        redactor: ctx.redactor,
      },
    )
    created.set(ctx, storage)
  }
  return storage
}

/**
 * Mounts `/files/signed/*` (temporary URLs), the public disk at its URL base when that is a
 * path of this app (`FILESYSTEM_PUBLIC_URL`, default `/storage`), the `/files` page and
 * `POST /files` (upload).
 */
export function mountStorage(app: Hono, ctx: DemoContext): void {
  const storage = demoStorage(ctx)
  app.route('/files/signed', storageRoutes({ storage, logger: ctx.logger }))
  const publicBase = storage.disk('public').url('x').slice(0, -'/x'.length)
  if (publicBase.startsWith('/') && !publicBase.startsWith('//')) {
    app.route(publicBase || '/', publicDiskRoutes({ storage, logger: ctx.logger }))
  }
  app.route('/', filesPages(ctx, storage))
}

function filesPages(ctx: DemoContext, storage: Storage): Hono {
  const app = new Hono()

  app.get('/files', async (c) => {
    pageHeaders(c)
    const session = await ctx.sessions.current(c.req.raw)
    if (!session) return c.redirect('/login?return_to=%2Ffiles', 303)
    const files = await storage.allFiles('uploads')
    const rows = await Promise.all(
      files.map(async (path) => ({
        path,
        size: await storage.size(path),
        link: await storage.temporaryUrl(path, LINK_SECONDS),
      })),
    )
    return c.html(
      page(
        'Files',
        html`<form method="post" action="/files" enctype="multipart/form-data">
            <input type="hidden" name="csrf_token" value="${session.csrfToken}" />
            <label for="file">Upload a file (at most 10 MiB)</label>
            <input id="file" type="file" name="file" required />
            <button type="submit">Upload</button>
          </form>
          <p>Disk <code>${storage.defaultDisk}</code>. Links work for ${LINK_SECONDS / 60} minutes.</p>
          ${
            rows.length === 0
              ? html`<p>No files yet.</p>`
              : html`<table>
                  <tr><th>File</th><th>Size</th></tr>
                  ${rows.map(
                    (row) =>
                      html`<tr><td><a href="${row.link}">${row.path}</a></td><td>${row.size} bytes</td></tr>`,
                  )}
                </table>`
          }`,
      ),
    )
  })

  app.post(
    '/files',
    // The file plus its multipart framing; the file itself is checked below.
    bodyLimit({ maxBytes: MAX_UPLOAD_BYTES + 64 * 1024 }),
    async (c) => {
      const session = await ctx.sessions.current(c.req.raw)
      if (!session) return c.json({ error: 'Unauthenticated' }, 401)
      const form = await c.req.parseBody()
      const token = typeof form.csrf_token === 'string' ? form.csrf_token : ''
      if (!constantTimeEqual(token, session.csrfToken)) return c.json({ error: 'Forbidden' }, 403)
      const file = form.file
      if (!(file instanceof File) || file.size === 0) {
        throw new ValidationError({ file: ['Choose a non-empty file'] })
      }
      if (file.size > MAX_UPLOAD_BYTES)
        throw new PayloadTooLargeError('Uploads are limited to 10 MiB')
      const path = `uploads/${randomBytes(6).toString('hex')}-${safeName(file.name)}`
      await storage.putWithOptions(path, file.stream(), {
        visibility: 'Private',
        ...(file.type ? { contentType: file.type } : {}),
      })
      ctx.logger.info({ path, size: file.size, userId: session.userId }, 'file uploaded')
      if (c.req.header('accept')?.includes('application/json')) {
        return c.json(
          { path, size: file.size, url: await storage.temporaryUrl(path, LINK_SECONDS) },
          201,
        )
      }
      return c.redirect('/files', 303)
    },
  )

  return app
}

/** Letters, digits, dot, dash and underscore; at most 80 characters. */
function safeName(name: string): string {
  const cleaned = name
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+/, '')
    .slice(-80)
  return cleaned === '' ? 'file' : cleaned
}

function withoutEmpty(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(env)) if (value) out[key] = value
  return out
}
