import type { Clock } from '../../core/clock.ts'
import type { KeyValueStore } from '../../core/kv/key-value-store.ts'
import type { AccessGrant } from '../protocol/grant.ts'
import { type RandomSource, randomToken, sha256Hex } from '../protocol/random.ts'
import { getJson, setJson, takeJson } from './json.ts'

/** What a grant is bound to, whichever way it was approved. */
export interface GrantBinding {
  clientId: string
  scope: string[]
  resource: string
  userId: string
  tenantId: string | undefined
  /** When the person approved (ms since the epoch): checked against a user's cut-off. */
  approvedAt: number
  /** Digest of the user's credential stamp at approval (with `credentialStamp` configured). */
  credentialStamp?: string
  /** The models and actions the person granted; absent when the app describes no access. */
  grant?: AccessGrant
}

/** An authorization request shown on the consent page, waiting for Approve or Deny. */
export interface PendingAuthorization
  extends Omit<GrantBinding, 'approvedAt' | 'credentialStamp' | 'grant'> {
  redirectUri: string
  /** Whether the request named `redirect_uri` (then /token must repeat it). @see RFC 6749 §4.1.3 */
  redirectUriSent: boolean
  codeChallenge: string
  state: string | undefined
  /** SHA-256 of the session's CSRF token when the page was shown. */
  csrfHash: string
  expiresAt: number
}

export interface AuthorizationCodeRecord extends GrantBinding {
  redirectUri: string
  redirectUriSent: boolean
  codeChallenge: string
  /** The token family the code starts, fixed when the code is issued. */
  familyId: string
  expiresAt: number
}

/** Authorization codes live 60 seconds. */
export const CODE_TTL_MS = 60_000
/** The consent page is good for 10 minutes. */
export const PENDING_TTL_MS = 600_000

const pendingKey = (id: string) => `oauth:authreq:${sha256Hex(id)}`
const codeKey = (hash: string) => `oauth:code:${hash}`
const codeFamilyKey = (hash: string) => `oauth:code-family:${hash}`

/**
 * Consent requests and authorization codes in the KeyValueStore, stored under the SHA-256 of
 * their values, so a flow begun on one instance completes on another. Expiry is checked
 * against the injected clock as well as by the store's TTL.
 */
export class AuthorizationCodeStore {
  readonly #store: KeyValueStore
  readonly #clock: Clock
  readonly #random: RandomSource

  constructor(store: KeyValueStore, clock: Clock, random: RandomSource) {
    this.#store = store
    this.#clock = clock
    this.#random = random
  }

  async savePending(request: Omit<PendingAuthorization, 'expiresAt'>): Promise<string> {
    const id = randomToken(this.#random)
    const expiresAt = this.#clock.now() + PENDING_TTL_MS
    await setJson(this.#store, pendingKey(id), { ...request, expiresAt }, PENDING_TTL_MS)
    return id
  }

  /** The pending request, left in place: for checking who may answer it. */
  async peekPending(id: string): Promise<PendingAuthorization | undefined> {
    if (id.length === 0 || id.length > 200) return undefined
    const record = await getJson<PendingAuthorization>(this.#store, pendingKey(id))
    return record && record.expiresAt > this.#clock.now() ? record : undefined
  }

  /** The pending request, removed: each consent page is answered once. */
  async takePending(id: string): Promise<PendingAuthorization | undefined> {
    if (id.length === 0 || id.length > 200) return undefined
    const record = await takeJson<PendingAuthorization>(this.#store, pendingKey(id))
    return record && record.expiresAt > this.#clock.now() ? record : undefined
  }

  /**
   * Issues a code. The family its tokens will belong to is fixed now and remembered for
   * `rememberMs` beside the code: a replay, even one racing the first exchange, finds the
   * family to revoke without waiting for that exchange to finish.
   */
  async issueCode(
    binding: Omit<AuthorizationCodeRecord, 'expiresAt'>,
    rememberMs: number,
  ): Promise<string> {
    const code = randomToken(this.#random)
    const hash = sha256Hex(code)
    const expiresAt = this.#clock.now() + CODE_TTL_MS
    await this.#store.set(codeFamilyKey(hash), binding.familyId, { ttlMs: rememberMs })
    await setJson(this.#store, codeKey(hash), { ...binding, expiresAt }, CODE_TTL_MS)
    return code
  }

  /** Reads a code without consuming it (a wrong verifier must not burn the code). */
  async peekCode(code: string): Promise<AuthorizationCodeRecord | undefined> {
    const record = await getJson<AuthorizationCodeRecord>(this.#store, codeKey(sha256Hex(code)))
    return record && record.expiresAt > this.#clock.now() ? record : undefined
  }

  /** Consumes a code: of concurrent exchanges exactly one gets the record. */
  async consumeCode(code: string): Promise<AuthorizationCodeRecord | undefined> {
    const record = await takeJson<AuthorizationCodeRecord>(this.#store, codeKey(sha256Hex(code)))
    return record && record.expiresAt > this.#clock.now() ? record : undefined
  }

  /** The token family of a code this server issued (used, expired or in use right now). */
  async familyOf(code: string): Promise<string | undefined> {
    return this.#store.get(codeFamilyKey(sha256Hex(code)))
  }
}
