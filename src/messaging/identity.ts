import type { Logger } from '../core/logger.ts'
import { Customer, Owner, type SenderIdentity } from './events.ts'
import { normalizePhone } from './phone.ts'

/** Synchronous owner check: given an E.164 number without `+`, true for the business's own people. */
export type IsOwner = (phone: string) => boolean

/** Classifies a sender as `Owner(phone)` or `Customer(phone)`. */
export function classifySender(phone: string, isOwner: IsOwner): SenderIdentity {
  return isOwner(phone) ? Owner(phone) : Customer(phone)
}

/** An `isOwner` over a fixed list (numbers may be written with `+`, spaces or dashes). */
export function staticOwners(phones: Iterable<string>): IsOwner {
  const owners = toSet(phones)
  return (phone) => owners.has(phone)
}

export interface OwnerDirectoryOptions {
  /** Loads the owner numbers, e.g. from a database table. */
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
  /** The numbers currently held. */
  owners(): string[]
  /** Stops the background reload. */
  close(): void
}

/**
 * Loads the owner list once (a failure here fails start-up) and keeps it fresh every
 * `refreshMs`. A failed background reload is logged and the last good list is kept, so a
 * database hiccup never turns owners into customers.
 */
export async function createOwnerDirectory(
  options: OwnerDirectoryOptions,
): Promise<OwnerDirectory> {
  if (typeof options.load !== 'function') {
    throw new TypeError('createOwnerDirectory: `load` must be a function returning phone numbers')
  }
  let owners = toSet(await options.load())
  let inFlight: Promise<void> | undefined
  const refresh = () => {
    inFlight ??= options
      .load()
      .then((phones) => {
        owners = toSet(phones)
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
    isOwner: (phone) => owners.has(phone),
    refresh,
    owners: () => [...owners],
    close: () => clearInterval(timer),
  }
}

function toSet(phones: Iterable<string>): Set<string> {
  const set = new Set<string>()
  for (const phone of phones) {
    const normalized = normalizePhone(String(phone))
    if (normalized) set.add(normalized)
  }
  return set
}
