import type { KeyValueStore } from '../../core/kv/key-value-store.ts'

/** An access token that was issued, remembered until it expires so it can be revoked. */
export interface IssuedToken {
  jti: string
  /** Expiry in milliseconds since the epoch. */
  expiresAt: number
}

const revokedKey = (jti: string) => `oauth:revoked:${jti}`

/**
 * Marks access tokens as revoked until they would have expired anyway. Used when a code is
 * replayed or a rotated refresh token is reused. @see RFC 6749 §4.1.2, RFC 9700 §4.14.2
 */
export async function revokeAccessTokens(
  store: KeyValueStore,
  tokens: IssuedToken[],
  now: number,
): Promise<void> {
  await Promise.all(
    tokens
      .filter((token) => token.expiresAt > now)
      .map((token) => store.set(revokedKey(token.jti), '1', { ttlMs: token.expiresAt - now })),
  )
}

export async function isAccessTokenRevoked(store: KeyValueStore, jti: string): Promise<boolean> {
  return (await store.get(revokedKey(jti))) !== undefined
}
