import { renameKeys } from 'kilnjs/api'
import { z } from 'zod'

const fields = {
  wamid: z.string().min(1).max(255),
  direction: z.string().min(1).max(8),
  phone: z.string().max(20).nullable(),
  sender_kind: z.string().max(10).nullable(),
  body: z.string().nullable(),
  status: z.string().max(10).nullable(),
  error_code: z.int32().nullable(),
  sent_at: z.iso
    .datetime({ offset: true })
    .transform((value) => new Date(value))
    .nullable(),
  status_at: z.iso
    .datetime({ offset: true })
    .transform((value) => new Date(value))
    .nullable(),
}

/** Body fields whose model property is named differently. */
const columns = {
  sender_kind: 'senderKind',
  error_code: 'errorCode',
  sent_at: 'sentAt',
  status_at: 'statusAt',
} as const

/** Body of `POST /api/v1/messages`. Unknown fields are rejected. */
export const CreateMessageRequest = z
  .strictObject(fields)
  .partial({
    phone: true,
    sender_kind: true,
    body: true,
    status: true,
    error_code: true,
    sent_at: true,
    status_at: true,
  })
  .transform((body) => renameKeys(body, columns))

/** Body of `PUT /api/v1/messages/{id}`: any subset of the fields; only those change. */
export const UpdateMessageRequest = z
  .strictObject(fields)
  .partial()
  .transform((body) => renameKeys(body, columns))
