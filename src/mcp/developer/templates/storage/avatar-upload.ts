import { type Context, Hono } from 'hono'
import type { Storage } from 'kilnjs/storage'

const MAX_AVATAR_BYTES = 2 * 1024 * 1024

/** The accepted image types, each with the bytes its files start with. */
const IMAGE_TYPES: Record<string, { extension: string; magic: number[] }> = {
  'image/png': { extension: 'png', magic: [0x89, 0x50, 0x4e, 0x47] },
  'image/jpeg': { extension: 'jpg', magic: [0xff, 0xd8, 0xff] },
  'image/webp': { extension: 'webp', magic: [0x52, 0x49, 0x46, 0x46] },
}

export interface AvatarRoutesOptions {
  storage: Storage
  /** The signed-in user's id, or undefined when nobody is signed in. */
  currentUserId: (c: Context) => string | undefined
}

/**
 * PUT /me/avatar with a multipart field `avatar`: checks that the user is signed in, that the
 * file is a PNG, JPEG or WebP image of at most 2 MB (by its declared type and by its first
 * bytes), stores it as `avatars/<user id>.<ext>` on the `public` disk, removes the previous
 * avatar of another type and answers `{ url }` (the CDN URL when the disk has one).
 */
export function avatarRoutes({ storage, currentUserId }: AvatarRoutesOptions): Hono {
  const app = new Hono()
  app.put('/me/avatar', async (c) => {
    const userId = currentUserId(c)
    if (!userId) return c.json({ error: 'Unauthenticated' }, 401)
    const body = await c.req.parseBody()
    const avatar = body.avatar
    if (!(avatar instanceof File)) {
      return c.json({ error: 'Validation failed', errors: { avatar: ['is required'] } }, 422)
    }
    const type = IMAGE_TYPES[avatar.type]
    if (!type) {
      return c.json(
        { error: 'Validation failed', errors: { avatar: ['must be a PNG, JPEG or WebP image'] } },
        422,
      )
    }
    if (avatar.size > MAX_AVATAR_BYTES) {
      return c.json(
        { error: 'Validation failed', errors: { avatar: ['must be at most 2 MB'] } },
        422,
      )
    }
    const bytes = new Uint8Array(await avatar.arrayBuffer())
    if (!type.magic.every((byte, index) => bytes[index] === byte)) {
      return c.json(
        { error: 'Validation failed', errors: { avatar: ['is not the image its type says'] } },
        422,
      )
    }
    const safeId = userId.replace(/[^A-Za-z0-9_-]/g, '_')
    const disk = storage.disk('public')
    const path = `avatars/${safeId}.${type.extension}`
    await disk.putWithOptions(path, bytes, { contentType: avatar.type, visibility: 'Public' })
    for (const other of Object.values(IMAGE_TYPES)) {
      const old = `avatars/${safeId}.${other.extension}`
      if (old !== path && (await disk.exists(old))) await disk.delete(old)
    }
    return c.json({ url: disk.cdnUrl(path) })
  })
  return app
}
