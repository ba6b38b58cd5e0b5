import type { Logger } from '../core/logger.ts'
import {
  type MessagingStatusUpdate,
  type MessagingTextReceived,
  type StatusError,
  toDeliveryStatus,
} from './events.ts'
import { classifySender, type IsOwner } from './identity.ts'

/** One event found in a webhook payload, with the stable id its emission carries. */
export type WebhookEvent =
  | { type: 'MessagingTextReceived'; id: string; event: MessagingTextReceived }
  | { type: 'MessagingStatusUpdate'; id: string; event: MessagingStatusUpdate }

export interface ExtractOptions {
  isOwner: IsOwner
  logger?: Logger | undefined
}

/**
 * Walks every entry, change, message and status of a webhook payload (the provider batches)
 * and returns the events in order. Parsed leniently: unknown fields pass, a change whose field
 * is not `messages`, a non-text message or a malformed item is logged and skipped.
 */
export function extractWebhookEvents(payload: unknown, options: ExtractOptions): WebhookEvent[] {
  const { logger } = options
  const events: WebhookEvent[] = []
  if (!isObject(payload) || !Array.isArray(payload.entry)) {
    logger?.warn(
      { object: isObject(payload) ? payload.object : undefined },
      'webhook payload without entries skipped',
    )
    return events
  }
  for (const entry of payload.entry) {
    if (!isObject(entry) || !Array.isArray(entry.changes)) {
      logger?.warn('webhook entry without changes skipped')
      continue
    }
    for (const change of entry.changes) {
      if (!isObject(change)) continue
      if (change.field !== 'messages') {
        logger?.info({ field: change.field }, 'webhook change skipped: not a messages change')
        continue
      }
      const value = isObject(change.value) ? change.value : {}
      for (const message of asArray(value.messages)) {
        const event = textEvent(message, payload, options)
        if (event) events.push(event)
      }
      for (const status of asArray(value.statuses)) {
        const event = statusEvent(status, logger)
        if (event) events.push(event)
      }
    }
  }
  return events
}

function textEvent(
  message: unknown,
  raw: unknown,
  options: ExtractOptions,
): WebhookEvent | undefined {
  if (!isObject(message) || typeof message.id !== 'string' || typeof message.from !== 'string') {
    options.logger?.warn('webhook message without id or sender skipped')
    return undefined
  }
  if (message.type !== 'text') {
    options.logger?.info(
      { wamid: message.id, type: message.type },
      'inbound message skipped: only text messages are supported',
    )
    return undefined
  }
  const text = isObject(message.text) ? message.text.body : undefined
  const timestamp = toDate(message.timestamp)
  if (typeof text !== 'string' || !timestamp) {
    options.logger?.warn({ wamid: message.id }, 'text message without body or timestamp skipped')
    return undefined
  }
  return {
    type: 'MessagingTextReceived',
    id: `${message.id}:text`,
    event: {
      wamid: message.id,
      sender_identity: classifySender(message.from, options.isOwner),
      text,
      timestamp,
      raw,
    },
  }
}

function statusEvent(status: unknown, logger: Logger | undefined): WebhookEvent | undefined {
  if (!isObject(status) || typeof status.id !== 'string') {
    logger?.warn('webhook status without message id skipped')
    return undefined
  }
  const timestamp = toDate(status.timestamp)
  if (!timestamp) {
    logger?.warn({ wamid: status.id }, 'webhook status without timestamp skipped')
    return undefined
  }
  const mapped = toDeliveryStatus(status.status)
  if (mapped === 'Unknown')
    logger?.info({ wamid: status.id, status: status.status }, 'unknown delivery status')
  return {
    type: 'MessagingStatusUpdate',
    id: `${status.id}:status:${String(status.status)}`,
    event: {
      wamid: status.id,
      status: mapped,
      timestamp,
      recipient: typeof status.recipient_id === 'string' ? status.recipient_id : undefined,
      errors: asArray(status.errors).filter(isObject).map(toStatusError),
    },
  }
}

function toStatusError(error: Record<string, unknown>): StatusError {
  const data = isObject(error.error_data) ? error.error_data : {}
  return {
    code: typeof error.code === 'number' ? error.code : undefined,
    title: typeof error.title === 'string' ? error.title : undefined,
    message: typeof error.message === 'string' ? error.message : undefined,
    details: typeof data.details === 'string' ? data.details : undefined,
  }
}

/** The provider's timestamps are Unix seconds, as strings. */
function toDate(value: unknown): Date | undefined {
  const seconds = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return undefined
  const date = new Date(seconds * 1000)
  // Beyond ±8.64e15 ms a Date is invalid, and no listener can store it.
  return Number.isNaN(date.getTime()) ? undefined : date
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : []
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * The message ids the webhook deduplicates on: every `entry[].changes[].value.messages[].id`
 * of the batch, each once, in order. The spec reads only the first; the webhook drops a batch
 * only when it has seen all of them, so a new message later in a batch is never lost.
 */
export function dedupMessageIds(payload: unknown): string[] {
  const ids = new Set<string>()
  if (!isObject(payload)) return []
  for (const entry of asArray(payload.entry)) {
    if (!isObject(entry)) continue
    for (const change of asArray(entry.changes)) {
      if (!isObject(change) || !isObject(change.value)) continue
      for (const message of asArray(change.value.messages)) {
        if (isObject(message) && typeof message.id === 'string' && message.id !== '') {
          ids.add(message.id)
        }
      }
    }
  }
  return [...ids]
}
