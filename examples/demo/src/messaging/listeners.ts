import { sql } from 'drizzle-orm'
import type { Listener } from 'kilnjs/core'
import type { PostgresDb } from 'kilnjs/db'
import type { MessagingStatusUpdate, MessagingTextReceived } from 'kilnjs/messaging'
import { messages } from '../schema.ts'

/**
 * What a column can hold: Postgres text cannot contain NUL, and the demo's columns have
 * lengths. A provider payload is outside data, so it is fitted rather than trusted to fit.
 */
function storable(value: string, maxLength?: number): string {
  const clean = value.replaceAll('\u0000', '')
  return maxLength === undefined ? clean : clean.slice(0, maxLength)
}

/** A provider error code as the integer column holds it, or null when it is not one. */
function storableCode(code: unknown): number | null {
  return Number.isInteger(code) && Math.abs(code as number) <= 2_147_483_647
    ? (code as number)
    : null
}

/** Stores each inbound text message once (a redelivery changes nothing). */
export class StoreInboundMessage implements Listener<MessagingTextReceived> {
  constructor(private readonly db: PostgresDb) {}

  async handle(event: MessagingTextReceived): Promise<void> {
    await this.db
      .insert(messages)
      .values({
        wamid: storable(event.wamid, 255),
        direction: 'inbound',
        // A user who hides the number behind a username arrives with a BSUID alone.
        phone:
          event.sender_identity.phone === undefined
            ? null
            : storable(event.sender_identity.phone, 20),
        senderKind: event.sender_identity.kind,
        body: storable(event.text),
        sentAt: event.timestamp,
      })
      .onConflictDoNothing({ target: messages.wamid })
  }
}

/** The order statuses move in; `Failed` is final and anything unknown ranks lowest. */
const rank = (status: ReturnType<typeof sql>) =>
  sql`(CASE ${status} WHEN 'Sent' THEN 1 WHEN 'Delivered' THEN 2 WHEN 'Read' THEN 3 WHEN 'Failed' THEN 4 ELSE 0 END)`

/**
 * Records the delivery status of a sent message. Statuses arrive out of order: one upsert
 * keeps the furthest status (read stays read when a late delivered arrives), atomically, so
 * two workers handling two statuses of one message at once cannot move it back either.
 */
export class StoreDeliveryStatus implements Listener<MessagingStatusUpdate> {
  constructor(private readonly db: PostgresDb) {}

  async handle(event: MessagingStatusUpdate): Promise<void> {
    const newer = sql`${rank(sql`excluded.status`)} > ${rank(sql`${messages.status}`)}`
    await this.db
      .insert(messages)
      .values({
        wamid: storable(event.wamid, 255),
        direction: 'outbound',
        phone: event.recipient === undefined ? null : storable(event.recipient, 20),
        status: event.status,
        errorCode: storableCode(event.errors[0]?.code),
        statusAt: event.timestamp,
      })
      .onConflictDoUpdate({
        target: messages.wamid,
        set: {
          status: sql`CASE WHEN ${newer} THEN excluded.status ELSE ${messages.status} END`,
          statusAt: sql`CASE WHEN ${newer} THEN excluded.status_at ELSE ${messages.statusAt} END`,
          errorCode: sql`CASE WHEN ${newer} THEN excluded.error_code ELSE ${messages.errorCode} END`,
          updatedAt: sql`now()`,
        },
      })
  }
}
