import { ValidationError } from '../core/errors.ts'
import type { Logger } from '../core/logger.ts'
import { backoffDelayMs, retry } from '../core/retry.ts'
import { redactSecrets, type Secret } from '../core/secret.ts'
import { isBsuid } from './bsuid.ts'
import { GRAPH_API_VERSION, type MessagingConfig } from './config.ts'
import {
  AccessTokenExpiredError,
  MessagingApiError,
  MessagingError,
  MessagingThrottledError,
  MessagingTimeoutError,
  type ProviderErrorFields,
  ReengagementRequiredError,
} from './errors.ts'
import { buildSendRequest, type OutboundMessage } from './message.ts'
import { isE164WithoutPlus } from './phone.ts'

/** The send result: the provider's message id, which delivery statuses refer to. */
export interface SendResult {
  wamid: string
}

/** Sends messages through the provider's API, from `createMessagingClient`. */
export interface MessagingClient {
  /**
   * Sends `message` to `to`: a phone number (E.164 without `+`, e.g. `12025550143`) or a
   * business-scoped user id (BSUID or parent BSUID, e.g. `US.13491208655302741918`).
   */
  send(to: string, message: OutboundMessage): Promise<SendResult>
}

/** How the client retries a send: the `retry` option of `createMessagingClient`. */
export interface SendRetryOptions {
  /** Tries in all, the first included. */
  attempts?: number
  /** The first retry waits about this long; each later one twice as long, up to `maxDelayMs`. */
  baseDelayMs?: number
  maxDelayMs?: number
}

/** Options of `createMessagingClient`. */
export interface MessagingClientOptions {
  config: MessagingConfig
  fetch?: typeof globalThis.fetch
  /** Per attempt. */
  timeoutMs?: number
  retry?: SendRetryOptions
  /** Injected for tests: waiting between retries, and the jitter's randomness in [0, 1). */
  sleep?: (ms: number) => Promise<void>
  random?: () => number
  logger?: Logger
}

/** Throttling: 130429 throughput, 131056 pair rate limit, 4 / 80007 app and account limits. */
const THROTTLING_CODES = new Set([4, 80007, 130429, 131056])
/** Temporary provider failures. */
const TRANSIENT_CODES = new Set([1, 2, 131000, 131016])
/**
 * Never retried, even on a 5xx: the same request cannot succeed. 131062: this message cannot go
 * to a BSUID (authentication templates need the phone number).
 */
const PERMANENT_CODES = new Set([100, 190, 131047, 131026, 131051, 131062, 132000, 132001, 132012])

const MAX_TEXT_LENGTH = 4096

/**
 * A client for the Graph API's `/{phone_number_id}/messages` (v23.0). Every call has a timeout;
 * throttling (130429, 131056) and temporary failures (5xx) are retried a bounded number of times
 * with exponential backoff and jitter; other provider errors become typed errors at once.
 * @example
 * ```ts
 * const client = createMessagingClient({ config: messagingConfig, logger })
 * ```
 */
export function createMessagingClient(options: MessagingClientOptions): MessagingClient {
  const { config, logger } = options
  const doFetch = options.fetch ?? globalThis.fetch
  const timeoutMs = options.timeoutMs ?? 10_000
  const attempts = Math.max(1, options.retry?.attempts ?? 3)
  const baseDelayMs = options.retry?.baseDelayMs ?? 500
  const maxDelayMs = options.retry?.maxDelayMs ?? 8_000
  const random = options.random ?? Math.random
  const url = `${config.graphApiUrl}/${GRAPH_API_VERSION}/${encodeURIComponent(config.phoneNumberId)}/messages`

  async function sendOnce(body: string): Promise<SendResult> {
    let response: Response
    let text: string
    try {
      response = await doFetch(url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${config.accessToken.reveal()}`,
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      })
      text = await response.text()
    } catch (error) {
      if (error instanceof Error && error.name === 'TimeoutError') {
        throw new MessagingTimeoutError(`Graph API did not answer within ${timeoutMs} ms`)
      }
      throw new MessagingError('Graph API is unreachable', { cause: describeCause(error) })
    }
    const json = parseJson(text)
    if (response.ok) {
      const wamid = firstMessageId(json)
      if (wamid) return { wamid }
      throw new MessagingError(`Graph API answered ${response.status} without a message id`)
    }
    throw toProviderError(response.status, json, config.secrets())
  }

  return {
    async send(to, message) {
      validate(to, message)
      const body = JSON.stringify(buildSendRequest(to, message))
      try {
        return await retry(() => sendOnce(body), {
          attempts,
          sleep: options.sleep,
          retryDelay: (outcome, n) =>
            outcome.ok || !isRetryable(outcome.error)
              ? undefined
              : backoffDelayMs(n, { baseMs: baseDelayMs, maxMs: maxDelayMs, random }),
          onRetry(outcome, n, delay) {
            const error = outcome.ok ? undefined : (outcome.error as Partial<MessagingApiError>)
            logger?.warn(
              {
                attempt: n,
                delayMs: delay,
                providerCode: error?.providerCode,
                fbtraceId: error?.fbtraceId,
              },
              `messaging send failed, retrying: ${error?.message}`,
            )
          },
        })
      } catch (error) {
        throw finalError(error)
      }
    },
  }
}

function validate(to: string, message: OutboundMessage): void {
  const errors: Record<string, string[]> = {}
  if (typeof to !== 'string' || !(isE164WithoutPlus(to) || isBsuid(to))) {
    // Keyed `phone` as before BSUIDs existed, so code reading the error keeps working.
    errors.phone = [
      'expected an E.164 number without "+" (e.g. 12025550143) or a business-scoped user id (e.g. US.13491208655302741918)',
    ]
  }
  if (message.type === 'text') {
    if (typeof message.body !== 'string' || message.body.trim() === '') {
      errors.body = ['expected a non-empty text']
    } else if (message.body.length > MAX_TEXT_LENGTH) {
      errors.body = [`expected at most ${MAX_TEXT_LENGTH} characters`]
    }
  } else if (message.type === 'template') {
    if (!message.name) errors.name = ['expected the name of an approved template']
    if (!message.language) errors.language = ['expected a language code such as en_US']
    if (!Array.isArray(message.parameters)) errors.parameters = ['expected a list']
  } else {
    errors.type = ['expected a Text or Template message']
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors)
}

function isRetryable(error: unknown): boolean {
  if (error instanceof MessagingApiError) {
    const code = error.providerCode
    if (code !== undefined && PERMANENT_CODES.has(code)) return false
    if (code !== undefined && (THROTTLING_CODES.has(code) || TRANSIENT_CODES.has(code))) return true
    return error.httpStatus >= 500
  }
  // Unreachable (connection refused, reset): retried. Timeouts are not (see MessagingTimeoutError).
  return error instanceof MessagingError && !(error instanceof MessagingTimeoutError)
}

/** A throttling error that outlived its retries becomes MessagingThrottledError. */
function finalError(error: unknown): unknown {
  if (
    error instanceof MessagingApiError &&
    !(error instanceof MessagingThrottledError) &&
    error.providerCode !== undefined &&
    THROTTLING_CODES.has(error.providerCode)
  ) {
    return new MessagingThrottledError(error.message, error)
  }
  return error
}

function toProviderError(httpStatus: number, json: unknown, secrets: Secret[]): MessagingError {
  // A provider may quote the credential it refused ("Malformed access token EAA…").
  const scrub = (text: string) => redactSecrets(text, secrets)
  const error = isObject(json) && isObject(json.error) ? json.error : undefined
  if (!error)
    return new MessagingApiError(`Graph API answered ${httpStatus}`, emptyFields(httpStatus))
  const data = isObject(error.error_data) ? error.error_data : {}
  const fields: ProviderErrorFields = {
    providerCode: typeof error.code === 'number' ? error.code : undefined,
    providerSubcode: typeof error.error_subcode === 'number' ? error.error_subcode : undefined,
    providerType: typeof error.type === 'string' ? error.type : undefined,
    providerDetails: typeof data.details === 'string' ? scrub(data.details) : undefined,
    fbtraceId: typeof error.fbtrace_id === 'string' ? error.fbtrace_id : undefined,
    httpStatus,
  }
  const message =
    typeof error.message === 'string' ? scrub(error.message) : `Graph API answered ${httpStatus}`
  switch (fields.providerCode) {
    case 131047:
      return new ReengagementRequiredError(message, fields)
    case 190:
      return new AccessTokenExpiredError(message, fields)
    default:
      return new MessagingApiError(message, fields)
  }
}

function emptyFields(httpStatus: number): ProviderErrorFields {
  return {
    providerCode: undefined,
    providerSubcode: undefined,
    providerType: undefined,
    providerDetails: undefined,
    fbtraceId: undefined,
    httpStatus,
  }
}

function firstMessageId(json: unknown): string | undefined {
  if (!isObject(json) || !Array.isArray(json.messages)) return undefined
  const first: unknown = json.messages[0]
  return isObject(first) && typeof first.id === 'string' ? first.id : undefined
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Keeps the error's name, code and message only (a fetch error never holds the token, but be sure). */
function describeCause(error: unknown): Error {
  const source = error instanceof Error ? ((error.cause as Error | undefined) ?? error) : undefined
  const code = (source as { code?: unknown } | undefined)?.code
  return new Error(
    `${source?.name ?? 'Error'}${typeof code === 'string' ? ` ${code}` : ''}: ${source?.message ?? String(error)}`,
  )
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
