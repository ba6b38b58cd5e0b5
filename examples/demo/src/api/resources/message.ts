import { z } from 'zod'
import type { messages } from '../../schema.js'

/**
 * A message as the API returns it.
 */
export const MessageResource = z.object({
  id: z.int(),
  wamid: z.string(),
  direction: z.string(),
  phone: z.string().nullable(),
  sender_kind: z.string().nullable(),
  body: z.string().nullable(),
  status: z.string().nullable(),
  error_code: z.int().nullable(),
  sent_at: z.iso.datetime().nullable(),
  status_at: z.iso.datetime().nullable(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
})

export type MessageResource = z.infer<typeof MessageResource>

export function toMessageResource(message: typeof messages.$inferSelect): MessageResource {
  return {
    id: message.id,
    wamid: message.wamid,
    direction: message.direction,
    phone: message.phone,
    sender_kind: message.senderKind,
    body: message.body,
    status: message.status,
    error_code: message.errorCode,
    sent_at: message.sentAt?.toISOString() ?? null,
    status_at: message.statusAt?.toISOString() ?? null,
    created_at: message.createdAt.toISOString(),
    updated_at: message.updatedAt.toISOString(),
  }
}
