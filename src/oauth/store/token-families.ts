import type { Clock } from '../../core/clock.ts'
import type { KeyValueStore } from '../../core/kv/key-value-store.ts'
import { type RandomSource, randomToken, sha256Hex } from '../protocol/random.ts'
import type { GrantBinding } from './authorization-codes.ts'
import { getJson, setJson } from './json.ts'
import { type IssuedToken, revokeAccessTokens } from './revocations.ts'

/** Refresh tokens live 30 days; each rotation starts a new 30 days. */
export const REFRESH_TTL_MS = 30 * 24 * 3600_000

/** A refresh token: bound to its grant and its family (all tokens descending from one grant). */
export interface RefreshTokenRecord extends GrantBinding {
  familyId: string
  expiresAt: number
}

const refreshKey = (hash: string) => `oauth:refresh:${hash}`
const usedRefreshKey = (hash: string) => `oauth:refresh-used:${hash}`
const revokedFamilyKey = (id: string) => `oauth:family-revoked:${id}`
const familyCountKey = (id: string) => `oauth:family-count:${id}`
const familyTokenKey = (id: string, n: number) => `oauth:family-token:${id}:${n}`

/**
 * Token families: every access and refresh token descending from one authorization. Reusing
 * a rotated refresh token, or replaying the code, revokes the whole family: its refresh
 * tokens stop working and its access tokens are listed as revoked until they expire.
 * @see RFC 9700 §4.14.2
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

  /** Remembers an access token of the family, so revoking the family reaches it. */
  async recordAccessToken(familyId: string, token: IssuedToken): Promise<void> {
    const n = await this.#store.increment(familyCountKey(familyId), 1, { ttlMs: REFRESH_TTL_MS })
    await setJson(
      this.#store,
      familyTokenKey(familyId, n),
      token,
      token.expiresAt - this.#clock.now(),
    )
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
    return (await this.#store.get(revokedFamilyKey(familyId))) !== undefined
  }

  async revoke(familyId: string): Promise<void> {
    const now = this.#clock.now()
    await this.#store.set(revokedFamilyKey(familyId), '1', { ttlMs: REFRESH_TTL_MS })
    const count = Number((await this.#store.get(familyCountKey(familyId))) ?? '0')
    const tokens: IssuedToken[] = []
    for (let n = 1; n <= count; n++) {
      const token = await getJson<IssuedToken>(this.#store, familyTokenKey(familyId, n))
      if (token) tokens.push(token)
    }
    await revokeAccessTokens(this.#store, tokens, now)
  }
}
