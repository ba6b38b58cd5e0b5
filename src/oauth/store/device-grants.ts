import type { Clock } from '../../core/clock.ts'
import type { KeyValueStore } from '../../core/kv/key-value-store.ts'
import type { AccessGrant } from '../protocol/grant.ts'
import { type RandomSource, randomToken, sha256Hex } from '../protocol/random.ts'
import { generateUserCode } from '../protocol/user-code.ts'
import { getJson, setJson } from './json.ts'

/** Device grants live 600 seconds; clients poll at least 5 seconds apart. @see RFC 8628 §3.2 */
export const DEVICE_TTL_MS = 600_000
export const DEVICE_INTERVAL_SECONDS = 5

export interface DeviceGrant {
  clientId: string
  scope: string[]
  resource: string
  /** Unformatted, upper case. */
  userCode: string
  expiresAt: number
}

/** Set once by the person on the device page: approvable (or deniable) once. */
export type DeviceDecision =
  | {
      status: 'approved'
      userId: string
      tenantId: string | undefined
      approvedAt: number
      credentialStamp?: string
      /** The scopes and models granted: the request's, narrowed on the consent page. */
      scope?: string[]
      grant?: AccessGrant
    }
  | { status: 'denied' }

export interface PollState {
  lastPollAt: number
  /** The interval in seconds the client must keep, grown by each slow_down. */
  interval: number
}

const grantKey = (hash: string) => `oauth:device:${hash}`
const userCodeKey = (code: string) => `oauth:device-user:${code}`
const decisionKey = (hash: string) => `oauth:device-decision:${hash}`
const pollKey = (hash: string) => `oauth:device-poll:${hash}`

/**
 * Device grants in the KeyValueStore. The grant itself never changes after it is created; the
 * decision and the polling state are separate keys, so a poll racing an approval never
 * overwrites it, and the first decision wins (setIfAbsent).
 */
export class DeviceGrantStore {
  readonly #store: KeyValueStore
  readonly #clock: Clock
  readonly #random: RandomSource

  constructor(store: KeyValueStore, clock: Clock, random: RandomSource) {
    this.#store = store
    this.#clock = clock
    this.#random = random
  }

  async create(
    grant: Omit<DeviceGrant, 'userCode' | 'expiresAt'>,
  ): Promise<{ deviceCode: string; userCode: string; expiresAt: number }> {
    const deviceCode = randomToken(this.#random)
    const hash = sha256Hex(deviceCode)
    const expiresAt = this.#clock.now() + DEVICE_TTL_MS
    for (let attempt = 0; attempt < 10; attempt++) {
      const userCode = generateUserCode(this.#random)
      const claimed = await this.#store.setIfAbsent(userCodeKey(userCode), hash, {
        ttlMs: DEVICE_TTL_MS,
      })
      if (!claimed) continue
      await setJson(this.#store, grantKey(hash), { ...grant, userCode, expiresAt }, DEVICE_TTL_MS)
      return { deviceCode, userCode, expiresAt }
    }
    throw new Error('Could not allocate a unique user code')
  }

  /** The grant behind a device code, keyed by the code's hash. */
  async get(deviceCode: string): Promise<{ hash: string; grant: DeviceGrant } | undefined> {
    if (deviceCode.length === 0 || deviceCode.length > 200) return undefined
    const hash = sha256Hex(deviceCode)
    const grant = await getJson<DeviceGrant>(this.#store, grantKey(hash))
    return grant ? { hash, grant } : undefined
  }

  /** The grant a (normalized) user code names, while it is still live. */
  async findByUserCode(
    userCode: string,
  ): Promise<{ hash: string; grant: DeviceGrant } | undefined> {
    const hash = await this.#store.get(userCodeKey(userCode))
    if (!hash) return undefined
    const grant = await getJson<DeviceGrant>(this.#store, grantKey(hash))
    if (!grant || grant.expiresAt <= this.#clock.now()) return undefined
    return { hash, grant }
  }

  async decision(hash: string): Promise<DeviceDecision | undefined> {
    return getJson<DeviceDecision>(this.#store, decisionKey(hash))
  }

  /** Records the person's decision; false when the grant was already decided. */
  async decide(hash: string, decision: DeviceDecision): Promise<boolean> {
    return this.#store.setIfAbsent(decisionKey(hash), JSON.stringify(decision), {
      ttlMs: DEVICE_TTL_MS,
    })
  }

  async pollState(hash: string): Promise<PollState | undefined> {
    return getJson<PollState>(this.#store, pollKey(hash))
  }

  async savePollState(hash: string, state: PollState): Promise<void> {
    await setJson(this.#store, pollKey(hash), state, DEVICE_TTL_MS)
  }

  /** Removes an approved grant when its token is issued; true for exactly one caller. */
  async consume(hash: string, grant: DeviceGrant): Promise<boolean> {
    const taken = await this.#store.take(grantKey(hash))
    if (taken === undefined) return false
    await Promise.all([
      this.#store.delete(userCodeKey(grant.userCode)),
      this.#store.delete(decisionKey(hash)),
      this.#store.delete(pollKey(hash)),
    ])
    return true
  }
}
