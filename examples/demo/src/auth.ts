import { eq } from 'drizzle-orm'
import { createPasswordHasher, type VerifyCredentials } from 'kiln/core'
import type { PostgresDatabase } from 'kiln/db'
import { users } from './schema.ts'

/** The demo's password hashing: scrypt with parameters fixed here, never read from a hash. */
export const passwords = createPasswordHasher({ cost: 16384, blockSize: 8, parallelization: 1 })

/** Email + password against the `users` table; unknown emails cost a dummy hash. */
export function verifyUserCredentials(database: PostgresDatabase): VerifyCredentials {
  return async ({ email, password }) => {
    const [user] = await database.db
      .select({ id: users.id, passwordHash: users.passwordHash })
      .from(users)
      .where(eq(users.email, email))
      .limit(1)
    return (await passwords.verify(password, user?.passwordHash)) && user
      ? String(user.id)
      : undefined
  }
}

/**
 * What a session is bound to: the user's password hash. A new password, or a deleted user,
 * ends the user's sessions on every instance, whichever surface (API, MCP, SQL) made the change.
 */
export function userCredentialStamp(database: PostgresDatabase) {
  return async (userId: string): Promise<string | undefined> => {
    const id = Number(userId)
    if (!Number.isSafeInteger(id)) return undefined
    const [user] = await database.db
      .select({ passwordHash: users.passwordHash })
      .from(users)
      .where(eq(users.id, id))
      .limit(1)
    return user?.passwordHash
  }
}
