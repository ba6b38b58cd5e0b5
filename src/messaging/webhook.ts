import { type ErrorHandler, type Handler, Hono } from 'hono'
import {
  ForbiddenError,
  InvalidJsonError,
  isKilnError,
  KilnError,
  messageOf,
} from '../core/errors.ts'
import { firstLineOf } from '../core/first-line.ts'
import { readBodyBytes } from '../core/http/body-limit.ts'
import { setContextValue } from '../core/http/context-value.ts'
import type { Logger, Redactor } from '../core/logger.ts'
import { OUTAGE_ANSWER, outageLogOf, outageOf } from '../core/outages.ts'
import type { Queue } from '../core/queue/queue.ts'
import { redactSecrets } from '../core/secret.ts'
import type { MessagingConfig } from './config.ts'
import { type DeduplicationStore, QueueDeduplicationStore } from './dedup.ts'
import { PROCESS_MESSAGING_WEBHOOK, type ProcessMessagingWebhookPayload } from './job.ts'
import { dedupMessageIds } from './payload.ts'
import { SIGNATURE_HEADER, verifyWebhookSignature } from './signature.ts'

/** The webhook body limit: the provider's notifications are a few kilobytes. */
export const WEBHOOK_BODY_LIMIT = 1024 * 1024

/** Options of `messagingWebhook`. */
export interface MessagingWebhookOptions {
  config: MessagingConfig
  queue: Queue
  dedup: DeduplicationStore
  logger?: Logger
  /** Scrubs secrets from the `Queue error: <detail>` text; the config's secrets always are. */
  redactor?: Redactor
  /** Default `/messaging/webhook`. */
  path?: string
  /** Bytes; default 1 MiB. Larger bodies are answered 413 without being read. */
  bodyLimit?: number
}

/** The signature does not match the body: 401 `Invalid signature`. */
export class InvalidSignatureError extends KilnError {
  override readonly code = 'invalid_signature'
  constructor() {
    super(messageOf('invalid_signature'))
  }
}

/** The body is not JSON: 400 `Invalid JSON`. */
export { InvalidJsonError }

/** Queuing failed: 500 `Queue error: <detail>`; the provider retries the delivery. */
export class WebhookQueueError extends KilnError {
  override readonly code = 'queue_error'
}

/**
 * The provider's webhook as a Hono app (mount it with `app.route('/', messagingWebhook(...))`):
 *
 * - GET answers the subscription handshake: `hub.challenge` as text when `hub.mode` is
 *   `subscribe` and `hub.verify_token` matches, else 403 `Forbidden`.
 * - POST reads the raw bytes once, checks `x-hub-signature-256` over them in constant time
 *   before any parsing, parses JSON, drops a batch whose every message id was seen in the last
 *   minutes, queues `ProcessMessagingWebhook` with the raw body and answers `{ received: true }`.
 *
 * Its errors are plain text, as the provider expects; they are answered by this app's own
 * error handler, so the host app's JSON handler does not apply here.
 * @example
 * ```ts
 * app.route('/', messagingWebhook({ config: messagingConfig, queue, dedup }))
 * ```
 */
export function messagingWebhook(options: MessagingWebhookOptions): Hono {
  const { config, queue, dedup, logger, redactor } = options
  if (!config || !queue || !dedup) {
    throw new TypeError('messagingWebhook: `config`, `queue` and `dedup` are required')
  }
  const path = options.path ?? '/messaging/webhook'
  const limit = options.bodyLimit ?? WEBHOOK_BODY_LIMIT
  // Dedup kept by this very queue: mark and enqueue together (see QueueDeduplicationStore).
  const atomic =
    dedup instanceof QueueDeduplicationStore && dedup.queue === queue ? dedup : undefined
  const app = new Hono()

  app.get(path, subscriptionHandshake(config))

  app.post(path, async function receiveMessagingWebhook(c) {
    const body = await readBodyBytes(c.req.raw, limit)
    if (!verifyWebhookSignature(config.appSecret, body, c.req.header(SIGNATURE_HEADER))) {
      logger?.warn('messaging webhook rejected: invalid signature')
      throw new InvalidSignatureError()
    }
    let text: string
    let payload: unknown
    try {
      text = utf8.decode(body)
      payload = JSON.parse(text)
    } catch {
      throw new InvalidJsonError()
    }
    const ids = dedupMessageIds(payload)
    const job: ProcessMessagingWebhookPayload = { payload_json: text }
    const [onlyId] = ids
    if (ids.length === 1 && onlyId !== undefined && atomic) {
      // The queue checks the id, marks it and adds the job in one step (one round trip); a
      // failed enqueue leaves no mark, so the provider's retry is processed.
      try {
        await queue.enqueue(PROCESS_MESSAGING_WEBHOOK, job, {
          deduplication: { id: onlyId, ttlMs: atomic.ttlMs },
        })
      } catch (error) {
        throw new WebhookQueueError(`Queue error: ${safeDetail(error, config, redactor)}`, {
          cause: error,
        })
      }
      return c.body(RECEIVED, 200, JSON_CONTENT)
    }
    const marked = await markMessageIds(dedup, ids, logger)
    if (marked === 'all seen') return c.body(RECEIVED, 200, JSON_CONTENT)
    try {
      await queue.enqueue(PROCESS_MESSAGING_WEBHOOK, job)
    } catch (error) {
      await releaseMarks(dedup, marked, logger)
      throw new WebhookQueueError(`Queue error: ${safeDetail(error, config, redactor)}`, {
        cause: error,
      })
    }
    return c.body(RECEIVED, 200, JSON_CONTENT)
  })

  app.onError(webhookErrorHandler(logger))

  return app
}

/** GET: the provider's subscription handshake, answered with `hub.challenge`. */
function subscriptionHandshake(config: MessagingWebhookOptions['config']): Handler {
  return function verifyMessagingSubscription(c) {
    const mode = c.req.query('hub.mode')
    const token = c.req.query('hub.verify_token')
    const challenge = c.req.query('hub.challenge')
    const tokenMatches = token !== undefined && config.verifyToken.equals(token)
    if (mode !== 'subscribe' || !tokenMatches || challenge === undefined) {
      throw new ForbiddenError('Forbidden')
    }
    c.header('X-Content-Type-Options', 'nosniff')
    return c.text(challenge, 200)
  }
}

/** Plain-text answers, as the provider expects; an outage told once by the outage log. */
function webhookErrorHandler(logger: Logger | undefined): ErrorHandler {
  return function messagingWebhookError(err, c) {
    // A dependency that did not answer is one outage, told once by the app's outage log.
    const dependency = outageOf(isKilnError(err) ? err.cause : err)
    if (dependency !== undefined && logger) {
      outageLogOf(logger).failed(dependency, err, { path: c.req.path })
      setContextValue(c, OUTAGE_ANSWER, true)
    }
    if (isKilnError(err)) {
      if (err.status >= 500 && dependency === undefined) {
        logger?.error({ err: err.cause ?? err }, err.message)
      }
      return c.text(err.message, err.status as 400)
    }
    if (dependency === undefined) logger?.error({ err }, 'messaging webhook failed')
    return c.text(messageOf('internal_error'), 500)
  }
}

/**
 * Marks every message id of the batch as seen. Returns `'all seen'` when each one already was
 * (the spec's fast path: acknowledge without queuing), else the ids this call marked, to be
 * released if queuing fails. A batch with any new message is queued whole: the job is
 * idempotent per message, so the messages seen before run no listener twice.
 */
async function markMessageIds(
  dedup: DeduplicationStore,
  ids: string[],
  logger: Logger | undefined,
): Promise<string[] | 'all seen'> {
  if (ids.length === 0) return []
  const results = await Promise.allSettled(ids.map((id) => dedup.checkAndInsert(id)))
  const marked = ids.filter((_, i) => {
    const result = results[i]
    return result?.status === 'fulfilled' && result.value === false
  })
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failed) {
    // The job is idempotent per message id, so queuing without the check loses nothing.
    logger?.warn(
      { err: failed.reason, wamids: ids },
      'dedup store failed; queuing without the check',
    )
    return marked
  }
  if (marked.length === 0) {
    logger?.debug({ wamids: ids }, 'messaging webhook duplicate acknowledged')
    return 'all seen'
  }
  return marked
}

async function releaseMarks(
  dedup: DeduplicationStore,
  ids: string[],
  logger: Logger | undefined,
): Promise<void> {
  await Promise.all(
    ids.map((id) =>
      dedup.release(id).catch((error: unknown) => {
        logger?.error({ err: error, wamid: id }, 'dedup mark could not be released')
      }),
    ),
  )
}

/** Every acknowledgement is the same `{"received":true}`: serialized once, not per request. */
const RECEIVED = JSON.stringify({ received: true })
const JSON_CONTENT = { 'Content-Type': 'application/json' }

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** The failure's message on one line, without secrets or URL credentials, at most 200 characters. */
function safeDetail(
  error: unknown,
  config: MessagingConfig,
  redactor: Redactor | undefined,
): string {
  let detail = firstLineOf(error)
  detail = redactSecrets(detail, config.secrets())
  detail = detail.replace(/(\w+:\/\/)[^/@\s]+@/g, '$1<redacted>@')
  if (redactor) detail = redactor.scrub(detail)
  detail = detail.trim() || (error instanceof Error ? error.name : 'unknown failure')
  return detail.length > 200 ? `${detail.slice(0, 197)}...` : detail
}
