import { renameKeys } from 'kilnjs/api'
import { z } from 'zod'

const fields = {
  post_id: z.int(),
  author_name: z.string().min(1).max(120),
  body: z.string().min(1),
}

/** Body fields whose model property is named differently. */
const columns = {
  post_id: 'postId',
  author_name: 'authorName',
} as const

/** Body of `POST /api/v1/comments`. Unknown fields are rejected. */
export const CreateCommentRequest = z
  .strictObject(fields)
  .transform((body) => renameKeys(body, columns))

/** Body of `PUT /api/v1/comments/{id}`: any subset of the fields; only those change. */
export const UpdateCommentRequest = z
  .strictObject(fields)
  .partial()
  .transform((body) => renameKeys(body, columns))
