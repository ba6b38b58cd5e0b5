import { bigserial, pgTable, timestamp, varchar } from 'drizzle-orm/pg-core'
import type { PostgresDb } from 'kilnjs/db'
import { normalizePhone } from 'kilnjs/messaging'

/**
 * The business's own numbers: their messages arrive as `Owner(phone)`. Not one of the demo's
 * API models (it is not exported from schema.ts); created by migrations/0002_messages.sql.
 */
export const messagingOwners = pgTable('messaging_owners', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  phone: varchar('phone', { length: 20 }).notNull().unique(),
  name: varchar('name', { length: 120 }).notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
})

export async function loadOwnerPhones(db: PostgresDb): Promise<string[]> {
  const rows = await db.select({ phone: messagingOwners.phone }).from(messagingOwners)
  return rows.map((row) => row.phone)
}

/** Adds the numbers of `MSG_OWNER_PHONES` (comma-separated) to the owner list. */
export async function seedOwners(db: PostgresDb, list: string | undefined): Promise<void> {
  const phones = (list ?? '')
    .split(',')
    .map((phone) => normalizePhone(phone))
    .filter((phone): phone is string => phone !== undefined)
  if (phones.length === 0) return
  await db
    .insert(messagingOwners)
    .values(phones.map((phone) => ({ phone, name: 'Owner' })))
    .onConflictDoNothing({ target: messagingOwners.phone })
}
