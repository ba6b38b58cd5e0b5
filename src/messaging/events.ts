/** Who wrote an inbound message: the business's own people, or a customer. */
export type SenderIdentity =
  | { readonly kind: 'Owner'; readonly phone: string }
  | { readonly kind: 'Customer'; readonly phone: string }

export function Owner(phone: string): SenderIdentity {
  return { kind: 'Owner', phone }
}

export function Customer(phone: string): SenderIdentity {
  return { kind: 'Customer', phone }
}

/** Delivery status of a message this number sent. `Unknown` for a value kiln does not know. */
export type DeliveryStatus = 'Sent' | 'Delivered' | 'Read' | 'Failed' | 'Unknown'

/** A provider error attached to a status (e.g. 131047 on a `Failed` status). */
export interface StatusError {
  code: number | undefined
  title: string | undefined
  message: string | undefined
  details: string | undefined
}

/** Emitted once per inbound text message. */
export interface MessagingTextReceived {
  /** The provider's message id. */
  wamid: string
  sender_identity: SenderIdentity
  text: string
  /** When the provider received the message (UTC). */
  timestamp: Date
  /** The whole webhook payload the message came in, as the provider sent it. */
  raw: unknown
}

/** Emitted once per delivery status of a message this number sent. */
export interface MessagingStatusUpdate {
  /** The id `send()` returned for the message. */
  wamid: string
  status: DeliveryStatus
  timestamp: Date
  /** The phone number the message went to (E.164 without `+`), when the provider says. */
  recipient: string | undefined
  /** The provider's errors, on `Failed` statuses. */
  errors: StatusError[]
}

/** The messaging event map, for `new EventBus<MessagingEvents>()`. */
export type MessagingEvents = {
  MessagingTextReceived: MessagingTextReceived
  MessagingStatusUpdate: MessagingStatusUpdate
}

const STATUSES: Record<string, DeliveryStatus> = {
  sent: 'Sent',
  delivered: 'Delivered',
  read: 'Read',
  failed: 'Failed',
}

/** Maps the provider's status string; anything unknown becomes `Unknown`. */
export function toDeliveryStatus(value: unknown): DeliveryStatus {
  const key = typeof value === 'string' ? value.toLowerCase() : ''
  // Own keys only: `__proto__` or `constructor` from a payload must not reach Object.prototype.
  return Object.hasOwn(STATUSES, key) ? STATUSES[key]! : 'Unknown'
}

const RANK: Record<DeliveryStatus, number> = {
  Unknown: 0,
  Sent: 1,
  Delivered: 2,
  Read: 3,
  Failed: 4,
}

/**
 * Statuses arrive out of order. Returns the status to keep when `next` arrives after
 * `current`: a status never moves back (read stays read when a late delivered arrives), and
 * `Failed` is final.
 */
export function laterStatus(
  current: DeliveryStatus | undefined,
  next: DeliveryStatus,
): DeliveryStatus {
  if (current === undefined) return next
  return RANK[next] > RANK[current] ? next : current
}
