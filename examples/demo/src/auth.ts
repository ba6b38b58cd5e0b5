import { eq, type SQL } from 'drizzle-orm'
import type { PostgresDatabase } from 'kilnjs/db'
import {
  createPasswordHasher,
  type PasswordUsers,
  passwordUsers,
  type VerifyCredentials,
} from 'kilnjs/session'
import { users } from './schema.ts'

/** The demo's password hashing: scrypt with parameters fixed here, never read from a hash. */
export const passwords = createPasswordHasher({ cost: 16384, blockSize: 8, parallelization: 1 })

/** The generated users API hashes a `password` input with this. */
export const hashPassword = (password: string): Promise<string> => passwords.hash(password)

/**
 * The demo's users for the login page and the sessions, through kiln's `passwordUsers`:
 * email + password against the `users` table (unknown emails cost a dummy hash), and the
 * password hash as each session's stamp, so a new password or a deleted user ends the user's
 * sessions on every instance, whichever surface (API, MCP, SQL) made the change.
 */
export function userAccounts(database: PostgresDatabase): PasswordUsers {
  const find = async (where: SQL) =>
    (
      await database.db
        .select({ id: users.id, passwordHash: users.passwordHash })
        .from(users)
        .where(where)
        .limit(1)
    )[0]
  return passwordUsers({
    passwords,
    byEmail: (email) => find(eq(users.email, email)),
    byId: async (userId) => {
      const id = Number(userId)
      return Number.isSafeInteger(id) ? find(eq(users.id, id)) : undefined
    },
  })
}

export const verifyUserCredentials = (database: PostgresDatabase): VerifyCredentials =>
  userAccounts(database).verifyCredentials

export const userCredentialStamp = (database: PostgresDatabase) =>
  userAccounts(database).credentialStamp
