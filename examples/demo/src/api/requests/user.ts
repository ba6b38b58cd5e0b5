import { renameKeys } from 'kiln/api'
import { z } from 'zod'

const fields = {
  email: z.email().max(255),
  name: z.string().min(1).max(120),
  password_hash: z.string().min(8).max(255),
  remember_token: z.string().max(100).nullable(),
}

/** Body fields whose model property is named differently. */
const columns = {
  password_hash: 'passwordHash',
  remember_token: 'rememberToken',
} as const

/** Body of `POST /api/v1/users`. Unknown fields are rejected. */
export const CreateUserRequest = z
  .strictObject(fields)
  .partial({ remember_token: true })
  .transform((body) => renameKeys(body, columns))

/** Body of `PUT /api/v1/users/{id}`: any subset of the fields; only those change. */
export const UpdateUserRequest = z
  .strictObject(fields)
  .partial()
  .transform((body) => renameKeys(body, columns))
