/** What a write did to one record. `restored`: taken out of the trash (soft delete). */
export type ChangeKind = 'created' | 'updated' | 'deleted' | 'restored'

/** The change kinds, in the order the docs and the OpenAPI documents list them. */
export const CHANGE_KINDS: readonly ChangeKind[] = ['created', 'updated', 'deleted', 'restored']

/**
 * One committed write to one record, as the feed carries it between instances. It holds no
 * field of the record: each subscriber reads the record under its own policy (the row may hold
 * credentials, and what a caller may see depends on the caller), so nothing else travels.
 */
export interface Change {
  /** The resource's name (`posts`), which names its stream. */
  resource: string
  /** The table written. */
  table: string
  kind: ChangeKind
  /** The record's primary key; a bigint travels as its decimal string. */
  id: string | number
}

/** A change with its place in its resource's feed. */
export interface ChangeEvent extends Change {
  /** Monotonic per resource, shared by every instance: the SSE `id`, `Last-Event-ID`'s value. */
  seq: number
  /** When the feed numbered it (ms since the epoch): what the window's age is measured on. */
  at: number
}

/** A change as it may be published: the id as its primary key holds it. */
export type ChangeInput = Omit<Change, 'id'> & { id: unknown }

/** The change with its id made JSON-safe (a bigint as its string). */
export function changeOf({ resource, table, kind, id }: ChangeInput): Change {
  return { resource, table, kind, id: typeof id === 'number' ? id : String(id) }
}

/** Reads an event back from the feed's JSON; undefined for anything else. */
export function parseEvent(text: string): ChangeEvent | undefined {
  try {
    const event = JSON.parse(text) as ChangeEvent
    if (typeof event?.seq !== 'number' || typeof event.resource !== 'string') return undefined
    return event
  } catch {
    return undefined
  }
}
