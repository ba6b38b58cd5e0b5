import type { Clock } from '../../core/clock.ts'
import type { KeyValueStore } from '../../core/kv/key-value-store.ts'
import type { AccessGrant } from '../protocol/grant.ts'
import { sha256Hex } from '../protocol/random.ts'
import { getJson, setJson } from './json.ts'
import { isFamilyRevoked, REFRESH_TTL_MS, revokedFamilyKey } from './token-families.ts'

/** One authorization a person gave a client: a token family, as the person sees it. */
export interface GrantRecord {
  grantId: string
  userId: string
  tenantId: string | undefined
  clientId: string
  clientName: string | undefined
  /** The host a client-metadata-document client proved it controls. */
  verifiedHost: string | undefined
  scope: string[]
  /** The models and actions the person granted (with the app's `describeAccess`). */
  grant?: AccessGrant | undefined
  /** Digest of the user's credential stamp at approval, when one is configured. */
  credentialStamp?: string | undefined
  /** Milliseconds since the epoch. */
  createdAt: number
  lastUsedAt: number
  /** The grant's position in its user's list. */
  slot: number
}

/**
 * How long a user's cut-off is kept: longer than any approval can wait before it becomes a
 * token (consent pages 10 minutes, device grants 10 minutes, codes 1 minute).
 */
const CUTOFF_TTL_MS = 30 * 60_000

const userKey = (userId: string) => sha256Hex(userId)
const grantKey = (grantId: string) => `oauth:grant:${grantId}`
const countKey = (userId: string) => `oauth:user-grants:${userKey(userId)}`
const slotKey = (userId: string, slot: number) => `oauth:user-grant:${userKey(userId)}:${slot}`
const cutoffKey = (userId: string) => `oauth:user-cutoff:${userKey(userId)}`

/**
 * Each user's grants in the KeyValueStore, so a person can see and end what they approved and
 * an application can end everything when an account is deleted or its password changes.
 * The store has no sets, so a user's grants are numbered slots under a counter; a slot lives
 * as long as its grant and each refresh extends both.
 */
export class GrantIndex {
  readonly #store: KeyValueStore
  readonly #clock: Clock

  constructor(store: KeyValueStore, clock: Clock) {
    this.#store = store
    this.#clock = clock
  }

  /** Lists a new grant under its user. */
  async add(grant: Omit<GrantRecord, 'slot' | 'createdAt' | 'lastUsedAt'>, ttlMs: number) {
    const slot = await this.#store.increment(countKey(grant.userId))
    const now = this.#clock.now()
    const record: GrantRecord = { ...grant, slot, createdAt: now, lastUsedAt: now }
    await Promise.all([
      setJson(this.#store, grantKey(grant.grantId), record, ttlMs),
      this.#store.set(slotKey(grant.userId, slot), grant.grantId, { ttlMs }),
    ])
  }

  /** A refresh: the grant is in use, and lives another `ttlMs`. */
  async touch(grantId: string, ttlMs: number): Promise<void> {
    const record = await getJson<GrantRecord>(this.#store, grantKey(grantId))
    if (!record) return
    record.lastUsedAt = this.#clock.now()
    await Promise.all([
      setJson(this.#store, grantKey(grantId), record, ttlMs),
      this.#store.set(slotKey(record.userId, record.slot), grantId, { ttlMs }),
    ])
  }

  /** The user's live grants, newest first. */
  async listForUser(userId: string): Promise<GrantRecord[]> {
    const count = Number((await this.#store.get(countKey(userId))) ?? '0')
    const slots = Array.from({ length: count }, (_, index) => count - index)
    const ids = await Promise.all(slots.map((slot) => this.#store.get(slotKey(userId, slot))))
    const records = await Promise.all(
      ids.map(async (id) => {
        if (id === undefined || (await isFamilyRevoked(this.#store, id))) return undefined
        return getJson<GrantRecord>(this.#store, grantKey(id))
      }),
    )
    return records.filter((record): record is GrantRecord => record?.userId === userId)
  }

  /** Ends one grant: every token of its family is refused from now on. */
  async revoke(grant: Pick<GrantRecord, 'grantId' | 'userId' | 'slot'>): Promise<void> {
    await this.#store.set(revokedFamilyKey(grant.grantId), '1', { ttlMs: REFRESH_TTL_MS })
    await Promise.all([
      this.#store.delete(grantKey(grant.grantId)),
      this.#store.delete(slotKey(grant.userId, grant.slot)),
    ])
  }

  /** Ends a grant known only by its id (RFC 7009 revocation of one of its tokens). */
  async revokeById(grantId: string): Promise<void> {
    const record = await getJson<GrantRecord>(this.#store, grantKey(grantId))
    if (record) await this.revoke(record)
    else await this.#store.set(revokedFamilyKey(grantId), '1', { ttlMs: REFRESH_TTL_MS })
  }

  /**
   * Ends every grant of a user. The cut-off is written first: an approval given before it
   * that becomes a token after the list was read is refused by `approvedBeforeCutoff`.
   */
  async revokeAllForUser(userId: string): Promise<number> {
    await this.#store.set(cutoffKey(userId), String(this.#clock.now()), { ttlMs: CUTOFF_TTL_MS })
    const grants = await this.listForUser(userId)
    await Promise.all(grants.map((grant) => this.revoke(grant)))
    return grants.length
  }

  /** True when the user's grants were all ended after this approval was given. */
  async approvedBeforeCutoff(userId: string, approvedAt: number): Promise<boolean> {
    const cutoff = await this.#store.get(cutoffKey(userId))
    return cutoff !== undefined && approvedAt <= Number(cutoff)
  }
}

/** One grant's record, for the bearer check of credential stamps. */
export function readGrant(store: KeyValueStore, grantId: string) {
  return getJson<GrantRecord>(store, grantKey(grantId))
}
