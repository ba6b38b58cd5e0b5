import type { Logger } from '../core/logger.ts'
import { isBsuid } from './bsuid.ts'
import {
  type MessagingStatusUpdate,
  type MessagingTextReceived,
  type StatusError,
  toDeliveryStatus,
} from './events.ts'
import { classifySender, type IsOwner, type SenderIds } from './identity.ts'

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
      const contacts = asArray(value.contacts).filter(isObject)
      for (const message of asArray(value.messages)) {
        const event = textEvent(message, contacts, payload, options)
        if (event) events.push(event)
      }
      for (const status of asArray(value.statuses)) {
        const event = statusEvent(status, contacts, logger)
        if (event) events.push(event)
      }
    }
  }
  return events
}

function textEvent(
  message: unknown,
  contacts: Contact[],
  raw: unknown,
  options: ExtractOptions,
): WebhookEvent | undefined {
  const sender = isObject(message) ? senderOf(message, contacts) : undefined
  if (!isObject(message) || typeof message.id !== 'string' || !sender) {
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
      sender_identity: classifySender(sender.ids, options.isOwner),
      text,
      timestamp,
      raw,
      ...present({
        phone: sender.ids.phone,
        user_id: sender.ids.user_id,
        parent_user_id: sender.ids.parent_user_id,
        username: sender.username,
      }),
    },
  }
}

type Contact = Record<string, unknown>

/**
 * The sender of an inbound message: its phone number (`from`, else the contact's `wa_id`), its
 * BSUID (`from_user_id`, else the contact's `user_id`), parent BSUID and username. The phone
 * is absent for a user who hides it behind a username; undefined when neither id is there.
 */
function senderOf(
  message: Record<string, unknown>,
  contacts: Contact[],
): { ids: SenderIds; username: string | undefined } | undefined {
  let phone = nonEmpty(message.from)
  let userId = nonEmpty(message.from_user_id)
  // A `from` in the BSUID's form is not a phone number, whatever field it came in.
  if (phone !== undefined && isBsuid(phone)) {
    userId ??= phone
    phone = undefined
  }
  const contact = contactOf(contacts, phone, userId)
  phone ??= nonEmpty(contact?.wa_id)
  userId ??= nonEmpty(contact?.user_id)
  const parent = nonEmpty(message.from_parent_user_id) ?? nonEmpty(contact?.parent_user_id)
  const username = nonEmpty(isObject(contact?.profile) ? contact.profile.username : undefined)
  const ids: SenderIds | undefined =
    phone !== undefined
      ? { phone, user_id: userId, parent_user_id: parent }
      : userId !== undefined
        ? { user_id: userId, parent_user_id: parent }
        : undefined
  return ids && { ids, username }
}

/**
 * The `contacts[]` entry of a user: the one whose `wa_id` or `user_id` is one of the given ids,
 * else the only entry when it names no one else (the provider sends one per user of the batch).
 */
function contactOf(
  contacts: Contact[],
  phone: string | undefined,
  userId: string | undefined,
): Contact | undefined {
  const agrees = (c: Contact) =>
    (phone === undefined || c.wa_id === undefined || c.wa_id === phone) &&
    (userId === undefined || c.user_id === undefined || c.user_id === userId)
  const named = contacts.find(
    (c) =>
      agrees(c) &&
      ((phone !== undefined && c.wa_id === phone) ||
        (userId !== undefined && c.user_id === userId)),
  )
  if (named) return named
  const [only] = contacts
  return contacts.length === 1 && only && agrees(only) ? only : undefined
}

function statusEvent(
  status: unknown,
  contacts: Contact[],
  logger: Logger | undefined,
): WebhookEvent | undefined {
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
  const recipient = typeof status.recipient_id === 'string' ? status.recipient_id : undefined
  const recipientUserId = nonEmpty(status.recipient_user_id)
  // A failed status carries no contacts: then the status's own fields are all there is.
  const contact = contactOf(contacts, recipient, recipientUserId)
  return {
    type: 'MessagingStatusUpdate',
    id: `${status.id}:status:${String(status.status)}`,
    event: {
      wamid: status.id,
      status: mapped,
      timestamp,
      recipient,
      errors: asArray(status.errors).filter(isObject).map(toStatusError),
      ...present({
        recipient_user_id: recipientUserId ?? nonEmpty(contact?.user_id),
        // Meta's examples write `parent_recipient_user_id`; some partners document the other order.
        recipient_parent_user_id:
          nonEmpty(status.parent_recipient_user_id) ??
          nonEmpty(status.recipient_parent_user_id) ??
          nonEmpty(contact?.parent_user_id),
      }),
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

/** A non-empty string, else undefined. */
function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** The fields that have a value: an id the provider did not send is absent, not `undefined`. */
function present<T extends Record<string, string | undefined>>(fields: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(fields).filter(([, value]) => value !== undefined),
  ) as Partial<T>
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
