import { z } from 'zod'
import type { posts } from '../../schema.js'

/**
 * A post as the API returns it.
 */
export const PostResource = z.object({
  id: z.int(),
  title: z.string(),
  body: z.string(),
  published: z.boolean(),
  token_count: z.int(),
  author_id: z.int(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
})

export type PostResource = z.infer<typeof PostResource>

export function toPostResource(post: typeof posts.$inferSelect): PostResource {
  return {
    id: post.id,
    title: post.title,
    body: post.body,
    published: post.published,
    token_count: post.tokenCount,
    author_id: post.authorId,
    created_at: post.createdAt.toISOString(),
    updated_at: post.updatedAt.toISOString(),
  }
}
