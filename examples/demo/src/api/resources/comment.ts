import { z } from 'zod'
import type { comments } from '../../schema.js'

/**
 * A comment as the API returns it.
 */
export const CommentResource = z.object({
  id: z.int(),
  post_id: z.int(),
  author_name: z.string(),
  body: z.string(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
})

export type CommentResource = z.infer<typeof CommentResource>

export function toCommentResource(comment: typeof comments.$inferSelect): CommentResource {
  return {
    id: comment.id,
    post_id: comment.postId,
    author_name: comment.authorName,
    body: comment.body,
    created_at: comment.createdAt.toISOString(),
    updated_at: comment.updatedAt.toISOString(),
  }
}
