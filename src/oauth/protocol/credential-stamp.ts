import { sha256Hex } from './random.ts'

/**
 * What a user's grants are bound to: a value that changes whenever the user's credentials do
 * (the password hash is the usual one), undefined when the user no longer exists. The same
 * function as the session store's `credentialStamp`.
 */
export type CredentialStamp = (userId: string) => Promise<string | undefined>

/**
 * The form a stamp is kept in next to a grant: its SHA-256, so the store never holds the
 * password hash itself. Undefined when the user is gone.
 */
export async function currentStampDigest(
  stamp: CredentialStamp,
  userId: string,
): Promise<string | undefined> {
  const value = await stamp(userId)
  return value === undefined ? undefined : sha256Hex(`kiln-credential-stamp:${value}`)
}

/**
 * True when a grant recorded with `recorded` may still be used: the user exists and, when the
 * grant recorded a stamp (grants from before stamps were configured have none), it is the same.
 */
export function stampStillValid(current: string | undefined, recorded: string | undefined) {
  return current !== undefined && (recorded === undefined || recorded === current)
}
