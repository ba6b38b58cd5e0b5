import { randomUUID } from 'node:crypto'
import type { KeyValueStore } from '../kv/key-value-store.ts'

/**
 * The mark's value while a listener runs starts with this (then the claim's own token, so that
 * a claimer undoes its claim and no other); any other value means the emission was handled.
 */
const RUNNING = 'running'
const HANDLED = 'handled'

/**
 * Another delivery of the same emission is running this listener right now. The emission is
 * reported as failed, and a queued job is postponed by `retryAfterMs` (one claim life; 0 when
 * the claim was released meanwhile) without spending an attempt: by then the listener has
 * handled it (the retry skips it), failed and released its claim or crashed and let it expire
 * (the retry runs it), or still runs and renewed it (postponed again, up to the queue's bound).
 */
export class ListenerInProgressError extends Error {
  readonly retryAfterMs: number

  constructor(listener: string, retryAfterMs: number) {
    super(`listener ${listener} is already handling this emission`)
    this.name = 'ListenerInProgressError'
    this.retryAfterMs = retryAfterMs
  }
}

export interface ClaimTimes {
  /** How long a claim lives without being renewed: a crashed worker's claim expires this fast. */
  claimTtlMs: number
  /** How long the "handled" mark is kept. */
  handledTtlMs: number
}

/** What `claimListener` found: run the listener, skip it (handled), or another runs it. */
export type ClaimOutcome =
  | { kind: 'claimed'; claim: ListenerClaim }
  | { kind: 'handled' }
  | { kind: 'busy'; retryAfterMs: number }

/**
 * Claims `mark` with an atomic set-if-absent before the listener runs, so two concurrent
 * deliveries of one emission cannot both run it. The claim is renewed while the listener runs,
 * so a slow listener keeps it and a crashed worker's claim expires after `claimTtlMs`.
 */
export async function claimListener(
  store: KeyValueStore,
  mark: string,
  times: ClaimTimes,
  onLost: () => void,
): Promise<ClaimOutcome> {
  const token = `${RUNNING}:${randomUUID()}`
  let claimed: boolean
  try {
    claimed = await store.setIfAbsent(mark, token, { ttlMs: times.claimTtlMs })
  } catch (error) {
    // A claim whose answer did not come may still land: a Redis that froze runs the command
    // sent to it once it thaws, and that claim, held by nobody, would answer every retry
    // "busy" for `claimTtlMs`. Its undo, sent now on the same connection, runs right behind it.
    store.deleteIf(mark, token).catch(() => {})
    throw error
  }
  if (claimed) {
    return { kind: 'claimed', claim: new ListenerClaim(store, mark, token, times, onLost) }
  }
  const value = await store.get(mark)
  // Absent again: the other run failed and released it, and this delivery retries at once.
  if (value === undefined) return { kind: 'busy', retryAfterMs: 0 }
  // Held: by the time it would expire unrenewed, its holder has finished or crashed.
  if (value.startsWith(RUNNING)) return { kind: 'busy', retryAfterMs: times.claimTtlMs }
  return { kind: 'handled' }
}

/**
 * A claim held while the listener runs. It is renewed only while the mark still holds its
 * token: once it expired unrenewed (the store out of reach for a whole claim life) and another
 * delivery claimed the emission, renewing would take that claim back. A lost claim is not
 * renewed again and `onLost` is called; the listener, already running, runs to its end (it
 * cannot be stopped), so the other delivery may run it alongside: at-least-once in that window.
 */
export class ListenerClaim {
  readonly #store: KeyValueStore
  readonly #mark: string
  readonly #token: string
  readonly #times: ClaimTimes
  readonly #timer: NodeJS.Timeout
  #renewal: Promise<void> = Promise.resolve()

  constructor(
    store: KeyValueStore,
    mark: string,
    token: string,
    times: ClaimTimes,
    onLost: () => void,
  ) {
    this.#store = store
    this.#mark = mark
    this.#token = token
    this.#times = times
    this.#timer = setInterval(() => {
      this.#renewal = store.replaceIf(mark, token, token, { ttlMs: times.claimTtlMs }).then(
        (held) => {
          if (held) return
          clearInterval(this.#timer)
          onLost()
        },
        // Unanswered: the claim may still be held, so the next renewal tries again.
        () => {},
      )
    }, times.claimTtlMs / 3)
    this.#timer.unref()
  }

  /** The listener succeeded: the mark says so for `handledTtlMs`, whoever holds the claim now. */
  async handled(): Promise<void> {
    await this.#stop()
    await this.#store.set(this.#mark, HANDLED, { ttlMs: this.#times.handledTtlMs })
  }

  /** The listener failed: the claim is dropped, so a retry runs it again. */
  async release(): Promise<void> {
    await this.#stop()
    // Only this claim: had it expired and another delivery claimed since, that one stays.
    await this.#store.deleteIf(this.#mark, this.#token)
  }

  // A renewal still in flight must land before the final write, or it would overwrite it.
  async #stop(): Promise<void> {
    clearInterval(this.#timer)
    await this.#renewal
  }
}
