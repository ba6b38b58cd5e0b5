import type { Clock } from '../../core/clock.ts'
import type { KeyValueStore } from '../../core/kv/key-value-store.ts'
import { type RandomSource, randomToken, sha256Hex } from '../protocol/random.ts'
import type { GrantBinding } from './authorization-codes.ts'
import { getJson, setJson } from './json.ts'

/** Refresh tokens live 30 days; each rotation starts a new 30 days. */
export const REFRESH_TTL_MS = 30 * 24 * 3600_000

/** A refresh token: bound to its grant and its family (all tokens descending from one grant). */
export interface RefreshTokenRecord extends GrantBinding {
  familyId: string
  expiresAt: number
}

const refreshKey = (hash: string) => `oauth:refresh:${hash}`
const usedRefreshKey = (hash: string) => `oauth:refresh-used:${hash}`
export const revokedFamilyKey = (id: string) => `oauth:family-revoked:${id}`

/**
 * Token families (grants): every access and refresh token descending from one authorization
 * carries the family's id (`grant_id` in access tokens). Revoking a family is one write, and
 * whatever is issued from it, before or after, is refused by that one mark: refresh tokens
 * here, access tokens by the bearer check. No list of tokens has to be complete at the moment
 * of revocation, so a concurrent replay cannot leave a token alive. @see RFC 9700 §4.14.2
 */
export class TokenFamilies {
  readonly #store: KeyValueStore
  readonly #clock: Clock
  readonly #random: RandomSource

  constructor(store: KeyValueStore, clock: Clock, random: RandomSource) {
    this.#store = store
    this.#clock = clock
    this.#random = random
  }

  newFamilyId(): string {
    return randomToken(this.#random, 16)
  }

  async issueRefreshToken(familyId: string, binding: GrantBinding): Promise<string> {
    const token = randomToken(this.#random)
    const record: RefreshTokenRecord = {
      ...binding,
      familyId,
      expiresAt: this.#clock.now() + REFRESH_TTL_MS,
    }
    await setJson(this.#store, refreshKey(sha256Hex(token)), record, REFRESH_TTL_MS)
    return token
  }

  async getRefreshToken(token: string): Promise<RefreshTokenRecord | undefined> {
    const record = await getJson<RefreshTokenRecord>(this.#store, refreshKey(sha256Hex(token)))
    return record && record.expiresAt > this.#clock.now() ? record : undefined
  }

  /** Marks a refresh token rotated; false when it already was (a reuse). Atomic. */
  async markRotated(token: string): Promise<boolean> {
    return this.#store.setIfAbsent(usedRefreshKey(sha256Hex(token)), '1', {
      ttlMs: REFRESH_TTL_MS,
    })
  }

  async wasRotated(token: string): Promise<boolean> {
    return (await this.#store.get(usedRefreshKey(sha256Hex(token)))) !== undefined
  }

  async isRevoked(familyId: string): Promise<boolean> {
    return isFamilyRevoked(this.#store, familyId)
  }

  /** Kept as long as any token of the family can live: a refresh token's 30 days. */
  async revoke(familyId: string): Promise<void> {
    await this.#store.set(revokedFamilyKey(familyId), '1', { ttlMs: REFRESH_TTL_MS })
  }
}

/** The bearer check: one store read per request. */
export async function isFamilyRevoked(store: KeyValueStore, familyId: string): Promise<boolean> {
  return (await store.get(revokedFamilyKey(familyId))) !== undefined
}
