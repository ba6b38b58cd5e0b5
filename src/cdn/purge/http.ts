import { type Clock, systemClock } from '../../core/clock.ts'
import { type Logger, silentLogger } from '../../core/logger.ts'
import { type FailedBatch, PurgeFailed } from '../errors.ts'
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

export interface BatchRunnerOptions extends PurgeHttpOptions {
  provider: string
  /** Values to scrub from provider answers before they reach an error or a log. */
  secrets: string[]
  /** Called before every HTTP request, retries included (the rate window). */
  beforeRequest?: () => Promise<void>
  /** Whether a provider answer means success; a string is the failure reason. */
  check: (answer: ProviderAnswer) => true | string
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * Sends the batches one after another. A 429 is retried after its `Retry-After` (bounded);
 * any other failure is recorded and the remaining batches still run. Rejects with
 * `PurgeFailed` listing the failed batches.
 */
export async function runBatches(batches: Batch[], options: BatchRunnerOptions): Promise<void> {
  const logger: Logger = options.logger ?? silentLogger()
  const clock: Clock = options.clock ?? systemClock
  const sleep = options.sleep ?? defaultSleep
  const doFetch = options.fetch ?? fetch
  const maxRetries = options.maxRetries ?? 3
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000
  const timeoutMs = options.timeoutMs ?? 15_000
  const scrub = (text: string) =>
    options.secrets.reduce(
      (out, secret) => (secret ? out.split(secret).join('<redacted>') : out),
      text,
    )

  const failures: FailedBatch[] = []
  for (const batch of batches) {
    let attempt = 0
    for (;;) {
      await options.beforeRequest?.()
      let answer: ProviderAnswer
      let retryAfter: string | null = null
      try {
        const response = await doFetch(batch.request.url, {
          method: batch.request.method,
          headers: batch.request.headers,
          body: batch.request.body,
          signal: AbortSignal.timeout(timeoutMs),
        })
        retryAfter = response.headers.get('retry-after')
        answer = { status: response.status, text: await response.text() }
      } catch (error) {
        const reason = scrub(`request failed: ${(error as Error).message}`)
        failures.push({ paths: batch.paths, reason })
        logger.error(
          { provider: options.provider, paths: batch.paths.length, reason },
          'CDN purge request failed',
        )
        break
      }
      if (answer.status === 429 && attempt < maxRetries) {
        const wait = retryAfterMs(retryAfter, clock) ?? 1_000 * 2 ** attempt
        if (wait <= maxRetryAfterMs) {
          attempt++
          logger.warn(
            { provider: options.provider, retryInMs: wait, attempt },
            'CDN purge rate limited; retrying after Retry-After',
          )
          await sleep(wait)
          continue
        }
      }
      const verdict = options.check(answer)
      if (verdict !== true) {
        const reason = scrub(verdict)
        failures.push({ paths: batch.paths, status: answer.status, reason })
        logger.error(
          { provider: options.provider, status: answer.status, paths: batch.paths.length, reason },
          'CDN purge request failed',
        )
      }
      break
    }
  }
  if (failures.length > 0) throw new PurgeFailed(options.provider, failures, batches.length)
  logger.info(
    {
      provider: options.provider,
      requests: batches.length,
      paths: batches.flatMap((b) => b.paths).length,
    },
    'CDN cache purged',
  )
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
