import type { VerifyCredentials } from './login-routes.ts'
import { createPasswordHasher, type PasswordHasher } from './passwords.ts'

/** What kiln reads of an app's user row: its id and its password hash. */
export interface PasswordUser {
  id: string | number
  passwordHash: string | null | undefined
}

/** Options of `passwordUsers`. */
export interface PasswordUsersOptions {
  /** The user with this email, or undefined: a lookup in the app's own user table. */
  byEmail: (email: string) => Promise<PasswordUser | undefined>
  /** The user with this id (as the session holds it, a string), or undefined. */
  byId: (id: string) => Promise<PasswordUser | undefined>
  /** The hasher the app stores passwords with; `createPasswordHasher()` by default. */
  passwords?: PasswordHasher
}

/** The login check and the session stamp built by `passwordUsers`. */
export interface PasswordUsers {
  /** For `loginRoutes`: the user's id when the email and password match. */
  verifyCredentials: VerifyCredentials
  /** For `createSessionStore`: the password hash, so a new password ends the user's sessions. */
  credentialStamp: (userId: string) => Promise<string | undefined>
}

/**
 * The two callbacks a password login needs, from two lookups in the app's user table, so that
 * wiring sessions and the login page is a few lines. Unknown emails still cost one hash check
 * (`PasswordHasher.verify` checks a dummy), so they take as long as a wrong password.
 * @example
 * ```ts
 * import { eq, type SQL } from 'drizzle-orm'
 * import { users } from './schema.ts'
 *
 * const find = async (where: SQL) => (await database.db.select().from(users).where(where))[0]
 * const accounts = passwordUsers({
 *   byEmail: (email) => find(eq(users.email, email)),
 *   byId: (id) => find(eq(users.id, Number(id))),
 * })
 * ```
 */
export function passwordUsers(options: PasswordUsersOptions): PasswordUsers {
  const passwords = options.passwords ?? createPasswordHasher()
  return {
    async verifyCredentials({ email, password }) {
      const user = await options.byEmail(email)
      const matches = await passwords.verify(password, user?.passwordHash)
      return matches && user ? String(user.id) : undefined
    },
    async credentialStamp(userId) {
      return (await options.byId(userId))?.passwordHash ?? undefined
    },
  }
}
