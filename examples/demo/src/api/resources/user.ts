import { z } from 'zod'
import type { users } from '../../schema.js'

/**
 * A user as the API returns it.
 * Left out: `password_hash`, `remember_token`.
 */
export const UserResource = z.object({
  id: z.int(),
  email: z.string(),
  name: z.string(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
})

export type UserResource = z.infer<typeof UserResource>

export function toUserResource(user: typeof users.$inferSelect): UserResource {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    created_at: user.createdAt.toISOString(),
    updated_at: user.updatedAt.toISOString(),
  }
}
