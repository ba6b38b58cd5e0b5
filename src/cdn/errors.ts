import { KilnError } from '../core/errors.ts'

/** A purge path that no adapter can send (empty, a control character, a misplaced `*`…). */
export class InvalidPurgePathError extends KilnError {
  override readonly code = 'invalid_purge_path'
}

/** One purge request that failed, as `PurgeFailedError` reports it. */
export interface FailedBatch {
  /** The paths this request was purging. */
  paths: string[]
  /** The provider's HTTP status, when it answered. */
  status?: number
  reason: string
}

/**
 * Some purge requests failed (after retries). `failures` lists each failed batch with its
 * paths; every other batch was purged.
 */
export class PurgeFailedError extends KilnError {
  override readonly code = 'cdn_purge_failed'
  readonly failures: FailedBatch[]
  readonly batches: number

  constructor(provider: string, failures: FailedBatch[], batches: number) {
    const list = failures
      .map((f) => {
        const shown = f.paths.slice(0, 3).join(', ') + (f.paths.length > 3 ? ', …' : '')
        return `[${shown}] ${f.status ? `HTTP ${f.status}: ` : ''}${f.reason}`
      })
      .join('; ')
    super(`CDN purge (${provider}) failed for ${failures.length} of ${batches} request(s): ${list}`)
    this.failures = failures
    this.batches = batches
  }
}

/** @deprecated Renamed `InvalidPurgePathError`; this name goes in the next minor version. */
export const InvalidPurgePath = InvalidPurgePathError
/** @deprecated Renamed `InvalidPurgePathError`. */
export type InvalidPurgePath = InvalidPurgePathError
/** @deprecated Renamed `PurgeFailedError`; this name goes in the next minor version. */
export const PurgeFailed = PurgeFailedError
/** @deprecated Renamed `PurgeFailedError`. */
export type PurgeFailed = PurgeFailedError
