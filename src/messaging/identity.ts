import type { Logger } from '../core/logger.ts'
import { isBsuid } from './bsuid.ts'
import { Customer, Owner, type SenderIdentity, type SenderKeys } from './events.ts'
import { normalizePhone } from './phone.ts'

/**
 * Synchronous owner check: given an id of a WhatsApp user (an E.164 number without `+`, a
 * BSUID or a parent BSUID), true for the business's own people.
 */
export type IsOwner = (id: string) => boolean

/** What the provider said about a sender: the keys, and the parent BSUID when it has one. */
export type SenderIds = SenderKeys & { readonly parent_user_id?: string | undefined }

/**
 * Classifies a sender as `Owner` or `Customer`: an owner when the owner list holds any of its
 * ids (phone number, BSUID, parent BSUID), a customer otherwise, so a sender known by a BSUID
 * alone is a customer unless that BSUID is listed. A string is a phone number (the spec's form).
 */
export function classifySender(sender: string | SenderIds, isOwner: IsOwner): SenderIdentity {
  const ids: SenderIds = typeof sender === 'string' ? { phone: sender } : sender
  const owner = [ids.phone, ids.user_id, ids.parent_user_id].some(
    (id) => id !== undefined && isOwner(id),
  )
  // Owner() and Customer() keep the phone and the BSUID; the parent only decides.
  return owner ? Owner(ids) : Customer(ids)
}

/**
 * An `isOwner` over a fixed list of phone numbers (written with `+`, spaces or dashes if you
 * like) and BSUIDs (written as the provider writes them).
 * @example
 * ```ts
 * const isOwner = staticOwners(['15551234567'])
 * ```
 */
export function staticOwners(ids: Iterable<string>): IsOwner {
  const owners = toSet(ids)
  return (id) => owners.has(id)
}

/** Options of `createOwnerDirectory`. */
export interface OwnerDirectoryOptions {
  /** Loads the owners' phone numbers and BSUIDs, e.g. from a database table. */
  load: () => Promise<string[]>
  /** How often the list is reloaded in the background; default 60 s. 0 never reloads. */
  refreshMs?: number
  logger?: Logger
}

/** A cached owner list: `isOwner` answers from memory, the list is reloaded in the background. */
export interface OwnerDirectory {
  readonly isOwner: IsOwner
  /** Reloads now; on failure the previous list stays and the error is thrown. */
  refresh(): Promise<void>
  /** The phone numbers and BSUIDs currently held. */
  owners(): string[]
  /** Stops the background reload. */
  close(): void
}

/**
 * Loads the owner list once (a failure here fails start-up) and keeps it fresh every
 * `refreshMs`. A failed background reload is logged and the last good list is kept, so a
 * database hiccup never turns owners into customers.
 * @example
 * ```ts
 * const owners = await createOwnerDirectory({ load: loadOwnerPhones, refreshMs: 30_000 })
 * ```
 */
export async function createOwnerDirectory(
  options: OwnerDirectoryOptions,
): Promise<OwnerDirectory> {
  if (typeof options.load !== 'function') {
    throw new TypeError(
      'createOwnerDirectory: `load` must be a function returning phone numbers or BSUIDs',
    )
  }
  let owners = toSet(await options.load())
  let inFlight: Promise<void> | undefined
  const refresh = () => {
    inFlight ??= options
      .load()
      .then((ids) => {
        owners = toSet(ids)
      })
      .finally(() => {
        inFlight = undefined
      })
    return inFlight
  }
  const refreshMs = options.refreshMs ?? 60_000
  const timer =
    refreshMs > 0
      ? setInterval(() => {
          refresh().catch((error: unknown) =>
            options.logger?.warn({ err: error }, 'owner list reload failed; keeping the last one'),
          )
        }, refreshMs)
      : undefined
  timer?.unref()
  return {
    isOwner: (id) => owners.has(id),
    refresh,
    owners: () => [...owners],
    close: () => clearInterval(timer),
  }
}

function toSet(ids: Iterable<string>): Set<string> {
  const set = new Set<string>()
  for (const id of ids) {
    const normalized = normalizeOwnerId(String(id))
    if (normalized) set.add(normalized)
  }
  return set
}

/** A BSUID as written (it is case-sensitive), a phone number as E.164 digits; else undefined. */
function normalizeOwnerId(input: string): string | undefined {
  const trimmed = input.trim()
  return isBsuid(trimmed) ? trimmed : normalizePhone(trimmed)
}
