import { Hono } from 'hono'
import { ForbiddenError, KilnError } from '../core/errors.ts'
import { readBodyBytes } from '../core/http/body-limit.ts'
import { constantTimeEqual } from '../core/http/constant-time.ts'
import type { Logger, Redactor } from '../core/logger.ts'
import type { Queue } from '../core/queue/queue.ts'
import type { MessagingConfig } from './config.ts'
import type { DeduplicationStore } from './dedup.ts'
import { PROCESS_MESSAGING_WEBHOOK, type ProcessMessagingWebhookPayload } from './job.ts'
import { dedupMessageId } from './payload.ts'
import { SIGNATURE_HEADER, verifyWebhookSignature } from './signature.ts'

/** The webhook body limit: the provider's notifications are a few kilobytes. */
export const WEBHOOK_BODY_LIMIT = 1024 * 1024

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
  override readonly status = 401
  constructor() {
    super('Invalid signature')
  }
}

/** The body is not JSON: 400 `Invalid JSON`. */
export class InvalidJsonError extends KilnError {
  override readonly code = 'invalid_json'
  override readonly status = 400
  constructor() {
    super('Invalid JSON')
  }
}

/** Queuing failed: 500 `Queue error: <detail>`; the provider retries the delivery. */
export class WebhookQueueError extends KilnError {
  override readonly code = 'queue_error'
  override readonly status = 500
}

/**
 * The provider's webhook as a Hono app (mount it with `app.route('/', messagingWebhook(...))`):
 *
 * - GET answers the subscription handshake: `hub.challenge` as text when `hub.mode` is
 *   `subscribe` and `hub.verify_token` matches, else 403 `Forbidden`.
 * - POST reads the raw bytes once, checks `x-hub-signature-256` over them in constant time
 *   before any parsing, parses JSON, drops a message id seen in the last minutes, queues
 *   `ProcessMessagingWebhook` with the raw body and answers `{ received: true }`.
 *
 * Its errors are plain text, as the provider expects; they are answered by this app's own
 * error handler, so the host app's JSON handler does not apply here.
 */
export function messagingWebhook(options: MessagingWebhookOptions): Hono {
  const { config, queue, dedup, logger, redactor } = options
  if (!config || !queue || !dedup) {
    throw new TypeError('messagingWebhook: `config`, `queue` and `dedup` are required')
  }
  const path = options.path ?? '/messaging/webhook'
  const limit = options.bodyLimit ?? WEBHOOK_BODY_LIMIT
  const app = new Hono()

  app.get(path, function verifyMessagingSubscription(c) {
    const mode = c.req.query('hub.mode')
    const token = c.req.query('hub.verify_token')
    const challenge = c.req.query('hub.challenge')
    const tokenMatches = token !== undefined && constantTimeEqual(token, config.verifyToken)
    if (mode !== 'subscribe' || !tokenMatches || challenge === undefined) {
      throw new ForbiddenError('Forbidden')
    }
    c.header('X-Content-Type-Options', 'nosniff')
    return c.text(challenge, 200)
  })

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
    const id = dedupMessageId(payload)
    let marked = false
    if (id !== undefined) {
      try {
        if (await dedup.checkAndInsert(id)) {
          logger?.debug({ wamid: id }, 'messaging webhook duplicate acknowledged')
          return c.json({ received: true })
        }
        marked = true
      } catch (error) {
        // The job is idempotent per message id, so queuing without the check loses nothing.
        logger?.warn({ err: error, wamid: id }, 'dedup store failed; queuing without the check')
      }
    }
    try {
      const job: ProcessMessagingWebhookPayload = { payload_json: text }
      await queue.enqueue(PROCESS_MESSAGING_WEBHOOK, job)
    } catch (error) {
      if (marked && id !== undefined) {
        await dedup.release(id).catch((releaseError: unknown) => {
          logger?.error({ err: releaseError, wamid: id }, 'dedup mark could not be released')
        })
      }
      throw new WebhookQueueError(`Queue error: ${safeDetail(error, config, redactor)}`, {
        cause: error,
      })
    }
    return c.json({ received: true })
  })

  app.onError(function messagingWebhookError(err, c) {
    if (err instanceof KilnError) {
      if (err.status >= 500) logger?.error({ err: err.cause ?? err }, err.message)
      return c.text(err.message, err.status as 400)
    }
    logger?.error({ err }, 'messaging webhook failed')
    return c.text('Internal Server Error', 500)
  })

  return app
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** The failure's message on one line, without secrets or URL credentials, at most 200 characters. */
function safeDetail(
  error: unknown,
  config: MessagingConfig,
  redactor: Redactor | undefined,
): string {
  let detail = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? ''
  for (const secret of config.secrets()) detail = detail.split(secret).join('<redacted>')
  detail = detail.replace(/(\w+:\/\/)[^/@\s]+@/g, '$1<redacted>@')
  if (redactor) detail = redactor.scrub(detail)
  detail = detail.trim() || (error instanceof Error ? error.name : 'unknown failure')
  return detail.length > 200 ? `${detail.slice(0, 197)}...` : detail
}
