import { type Clock, systemClock } from '../../core/clock.ts'
import { type Logger, silentLogger } from '../../core/logger.ts'
import { backoffDelayMs, retry } from '../../core/retry.ts'
import { redactSecrets, type Secret } from '../../core/secret.ts'
import { type FailedBatch, PurgeFailedError } from '../errors.ts'
import type { PurgeHttpOptions } from './types.ts'

export interface PurgeRequest {
  method: 'DELETE' | 'POST'
  url: string
  headers: Record<string, string>
  body?: string
}

export interface Batch {
  paths: string[]
  request: PurgeRequest
}

export interface ProviderAnswer {
  status: number
  text: string
}

type SentRequest = (ProviderAnswer & { retryAfter: string | null }) | { error: unknown }

export interface BatchRunnerOptions extends PurgeHttpOptions {
  provider: string
  /** Values to scrub from provider answers before they reach an error or a log. */
  secrets: Secret[]
  /** Called before every HTTP request, retries included (the rate window). */
  beforeRequest?: () => Promise<void>
  /** Whether a provider answer means success; a string is the failure reason. */
  check: (answer: ProviderAnswer) => true | string
}

/**
 * Sends the batches one after another. A 429 is retried after its `Retry-After` (bounded);
 * any other failure is recorded and the remaining batches still run. Rejects with
 * `PurgeFailedError` listing the failed batches.
 */
export async function runBatches(batches: Batch[], options: BatchRunnerOptions): Promise<void> {
  const logger: Logger = options.logger ?? silentLogger()
  const clock: Clock = options.clock ?? systemClock
  const doFetch = options.fetch ?? fetch
  const maxRetries = options.maxRetries ?? 3
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000
  const timeoutMs = options.timeoutMs ?? 15_000
  const scrub = (text: string) => redactSecrets(text, options.secrets)

  /** One request; a network failure is an outcome too (never retried), not an exception. */
  const send = async (request: PurgeRequest): Promise<SentRequest> => {
    try {
      const response = await doFetch(request.url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal: AbortSignal.timeout(timeoutMs),
      })
      const retryAfter = response.headers.get('retry-after')
      return { status: response.status, text: await response.text(), retryAfter }
    } catch (error) {
      return { error }
    }
  }

  const failures: FailedBatch[] = []
  for (const batch of batches) {
    const sent = await retry(
      async () => {
        await options.beforeRequest?.()
        return send(batch.request)
      },
      {
        attempts: maxRetries + 1,
        sleep: options.sleep,
        // Only a 429 is retried, after its Retry-After unless that is too long to wait.
        retryDelay(outcome, attempt) {
          if (!outcome.ok || 'error' in outcome.value || outcome.value.status !== 429) {
            return undefined
          }
          const wait =
            retryAfterMs(outcome.value.retryAfter, clock) ??
            backoffDelayMs(attempt, { baseMs: 1_000 })
          return wait <= maxRetryAfterMs ? wait : undefined
        },
        onRetry(_outcome, attempt, wait) {
          logger.warn(
            { provider: options.provider, retryInMs: wait, attempt },
            'CDN purge rate limited; retrying after Retry-After',
          )
        },
      },
    )
    const failure = failureOf(sent, batch, options.check, scrub)
    if (!failure) continue
    failures.push(failure)
    const { status, reason } = failure
    logger.error(
      { provider: options.provider, status, paths: batch.paths.length, reason },
      'CDN purge request failed',
    )
  }
  if (failures.length > 0) throw new PurgeFailedError(options.provider, failures, batches.length)
  logger.info(
    {
      provider: options.provider,
      requests: batches.length,
      paths: batches.flatMap((b) => b.paths).length,
    },
    'CDN cache purged',
  )
}

/** How a batch's request failed (its reason scrubbed of secrets), or undefined when it did not. */
function failureOf(
  sent: SentRequest,
  batch: Batch,
  check: BatchRunnerOptions['check'],
  scrub: (text: string) => string,
): FailedBatch | undefined {
  if ('error' in sent) {
    return { paths: batch.paths, reason: scrub(`request failed: ${(sent.error as Error).message}`) }
  }
  const verdict = check({ status: sent.status, text: sent.text })
  if (verdict === true) return undefined
  return { paths: batch.paths, status: sent.status, reason: scrub(verdict) }
}

/** `Retry-After` as delay-seconds or an HTTP date, in milliseconds from now. */
export function retryAfterMs(value: string | null, clock: Clock): number | undefined {
  if (value === null || value.trim() === '') return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, at - clock.now())
}

/** A short, single-line excerpt of a provider's answer for error messages. */
export function excerpt(text: string, fallback: string): string {
  const line = text.replace(/\s+/g, ' ').trim()
  if (line === '') return fallback
  try {
    const json = JSON.parse(line) as { message?: unknown; errors?: { message?: unknown }[] }
    if (typeof json.message === 'string') return json.message
    const messages = json.errors?.map((e) => e.message).filter((m) => typeof m === 'string')
    if (messages && messages.length > 0) return messages.join('; ')
  } catch {}
  return line.length > 200 ? `${line.slice(0, 200)}…` : line
}

export function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}
