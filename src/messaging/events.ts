/**
 * The ids a WhatsApp user is known by: the phone number (E.164 without `+`), the
 * business-scoped user id (`user_id`, a BSUID), or both. A user who adopted a username may
 * arrive with the BSUID alone; a notification from before BSUIDs, with the phone alone.
 */
export type SenderKeys =
  | { readonly phone: string; readonly user_id?: string }
  | { readonly phone?: undefined; readonly user_id: string }

/**
 * Who wrote an inbound message: the business's own people, or a customer. `Owner(phone)` and
 * `Customer(phone)` as specified, with the sender's BSUID beside the phone when the provider
 * sent it, and in its place when the phone is withheld.
 */
export type SenderIdentity = ({ readonly kind: 'Owner' } | { readonly kind: 'Customer' }) &
  SenderKeys

/** A sender who is one of the business's owners. */
export function Owner(sender: string | SenderKeys): SenderIdentity {
  return { kind: 'Owner', ...toKeys(sender) }
}

/** A sender who is a customer (not one of the business's owners). */
export function Customer(sender: string | SenderKeys): SenderIdentity {
  return { kind: 'Customer', ...toKeys(sender) }
}

/** A string is a phone number, as in the specification; absent keys are left out. */
function toKeys(sender: string | SenderKeys): SenderKeys {
  if (typeof sender === 'string') return { phone: sender }
  if (sender.phone === undefined) return { user_id: sender.user_id }
  return sender.user_id === undefined
    ? { phone: sender.phone }
    : { phone: sender.phone, user_id: sender.user_id }
}

/**
 * Where a reply to `sender` goes, for `send()`: the phone number when the provider shared it
 * (the provider recommends it, and statuses then keep carrying the number), else the BSUID.
 */
export function replyAddress(sender: SenderKeys): string {
  return sender.phone ?? sender.user_id
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
  /** The sender's phone number (E.164 without `+`); absent when the user withholds it. */
  phone?: string
  /** The sender's business-scoped user id (BSUID): the stable key to store for this user. */
  user_id?: string
  /** The sender's parent BSUID, when the business has parent BSUIDs enabled. */
  parent_user_id?: string
  /** The sender's WhatsApp username (display only: users can change it). */
  username?: string
}

/** Emitted once per delivery status of a message this number sent. */
export interface MessagingStatusUpdate {
  /** The id `send()` returned for the message. */
  wamid: string
  status: DeliveryStatus
  timestamp: Date
  /** The phone number the message went to (E.164 without `+`), when the provider says. */
  recipient: string | undefined
  /** The recipient's BSUID, when the provider says (a failed status sent to a number may not). */
  recipient_user_id?: string
  /** The recipient's parent BSUID, when the business has parent BSUIDs enabled. */
  recipient_parent_user_id?: string
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
