import { z } from 'zod'

const fields = {
  email: z.email().max(255),
  name: z.string().min(1).max(120),
  password: z.string().min(8).max(256),
}

/**
 * Body of `POST /api/v1/users`. Unknown fields are rejected. `password` is hashed
 * by the app's `hashPassword` into `password_hash`: a hash is never taken from a caller.
 */
export const CreateUserRequest = z.strictObject(fields)

/** Body of `PUT /api/v1/users/{id}`: any subset of the fields; only those change. */
export const UpdateUserRequest = z.strictObject(fields).partial()
