/** What one try gave: the value it returned or the error it threw. */
export type TryOutcome<T> = { ok: true; value: T } | { ok: false; error: unknown }

/** Options of `retry`. */
export interface RetryOptions<T> {
  /** Tries in all, the first included. */
  attempts: number
  /**
   * How long to wait before trying again after `outcome` of try `attempt` (1-based), or
   * undefined to stop there: the value is returned, the error thrown.
   */
  retryDelay(outcome: TryOutcome<T>, attempt: number): number | undefined
  /** Injected for tests; `setTimeout` by default. */
  sleep?: (ms: number) => Promise<void>
  /** Called before each wait, e.g. to log the retry. */
  onRetry?(outcome: TryOutcome<T>, attempt: number, delayMs: number): void
}

/**
 * kiln's one retry loop: runs `work` until `retryDelay` says stop or the attempts run out.
 * Both outcomes may be retried (a thrown network error, a returned 429), so callers keep their
 * own rules of what is worth another try.
 */
export async function retry<T>(
  work: (attempt: number) => Promise<T>,
  options: RetryOptions<T>,
): Promise<T> {
  const sleep = options.sleep ?? defaultSleep
  for (let attempt = 1; ; attempt++) {
    let outcome: TryOutcome<T>
    try {
      outcome = { ok: true, value: await work(attempt) }
    } catch (error) {
      outcome = { ok: false, error }
    }
    const delay = attempt < options.attempts ? options.retryDelay(outcome, attempt) : undefined
    if (delay === undefined) {
      if (outcome.ok) return outcome.value
      throw outcome.error
    }
    options.onRetry?.(outcome, attempt, delay)
    await sleep(delay)
  }
}

/** Options of `backoffDelayMs`. */
export interface BackoffOptions {
  /** The wait after the first try; each later one doubles it. */
  baseMs: number
  /** The longest wait. */
  maxMs?: number
  /** With it, "equal jitter": a wait between half the delay and the delay, so clients spread out. */
  random?: () => number
}

/** The exponential backoff after try `attempt` (1-based): base·2^(attempt−1), capped, jittered. */
export function backoffDelayMs(attempt: number, options: BackoffOptions): number {
  const ceiling = Math.min(
    options.maxMs ?? Number.POSITIVE_INFINITY,
    options.baseMs * 2 ** (attempt - 1),
  )
  if (!options.random) return ceiling
  return Math.round(ceiling / 2 + options.random() * (ceiling / 2))
}

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
