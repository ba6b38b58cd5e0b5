import { renameKeys } from 'kilnjs/api'
import { z } from 'zod'

const fields = {
  title: z.string().min(1).max(200),
  body: z.string().min(1),
  published: z.boolean(),
  token_count: z.int32(),
  author_id: z.int(),
}

/** Body fields whose model property is named differently. */
const columns = {
  token_count: 'tokenCount',
  author_id: 'authorId',
} as const

/** Body of `POST /api/v1/posts`. Unknown fields are rejected. */
export const CreatePostRequest = z
  .strictObject(fields)
  .partial({ published: true, token_count: true })
  .transform((body) => renameKeys(body, columns))

/** Body of `PUT /api/v1/posts/{id}`: any subset of the fields; only those change. */
export const UpdatePostRequest = z
  .strictObject(fields)
  .partial()
  .transform((body) => renameKeys(body, columns))
