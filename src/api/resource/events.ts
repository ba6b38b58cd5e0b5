import { NotFoundError } from '../../core/errors.ts'
import { UNKNOWN_CLIENT } from '../../core/http/client-ip.ts'
import type { QueryCaller } from '../query/definition.ts'
import { listedRecord } from '../query/one.ts'
import type { ChangeEvent, StreamMessage } from '../realtime/index.ts'
import { TRASHED_PARAM } from '../rest/soft-delete.ts'
import type { ResourceCall, ResourceContext } from './call.ts'
import type { ResourceDefinition } from './define.ts'
import { type RecordLookup, recordLookup } from './records.ts'

/** The list parameters a stream takes: what narrows it and what its records show. */
const STREAM_PARAMS = /^(filter\[.*\]|fields|include|search)$/

/** Ids a stream remembers having sent, to tell when one of them leaves its view. */
const SEEN_IDS = 1_000

/**
 * The reads of one event, shared by the streams of this instance that would make the same one
 * (same caller, same parameters): the feed hands every stream the same event object, so a
 * thousand streams of one key read a change once. Dropped with the event.
 */
const sharedReads = new WeakMap<ChangeEvent, Map<string, Promise<unknown>>>()

function once<T>(event: ChangeEvent, key: string, read: () => Promise<T>): Promise<T> {
  let reads = sharedReads.get(event)
  if (!reads) {
    reads = new Map()
    sharedReads.set(event, reads)
  }
  let running = reads.get(key)
  if (!running) {
    running = read()
    reads.set(key, running)
  }
  return running as Promise<T>
}

/** `GET /events`: the resource's changes as server-sent events, each read as a GET reads it. */
export function eventsOperation(
  resource: ResourceDefinition,
  context: ResourceContext,
  lookup: RecordLookup,
) {
  return {
    async events(call: ResourceCall): Promise<Response> {
      const { realtime } = context
      if (!realtime) throw new NotFoundError()
      const params = new URL(call.request.url).searchParams
      const view = changeViewOf(resource, context, lookup, call.caller, params)
      // A bad filter or field is a 422 now, before the stream opens, as the list answers it.
      await view.check()
      return realtime.stream({
        resource: resource.name,
        request: call.request,
        caller: call.caller,
        client: call.client ?? (() => UNKNOWN_CLIENT),
        view: view.read,
      })
    },
  }
}

/** The stream's own list parameters, read once per change by the record's id. */
function streamParams(given: URLSearchParams): URLSearchParams {
  const params = new URLSearchParams()
  for (const [name, value] of given) {
    if (STREAM_PARAMS.test(name) && name !== TRASHED_PARAM) params.append(name, value)
  }
  return params
}

/** A change as one subscriber may see it (`changeView`). */
export interface ChangeView {
  /** Rejects with the list's 422 for a bad parameter, before a subscription starts. */
  check(): Promise<unknown>
  /**
   * The event for this subscriber (its `id` the event's `seq`), or undefined when the change is
   * not theirs to see. Subscribers reading alike share one message object: never change it.
   */
  read(event: ChangeEvent): Promise<StreamMessage | undefined>
}

/**
 * A change as one caller may see it. The record is read again through the list query (the
 * caller's row filter, `filter[…]`, `fields`, soft delete, the resource's record mapper), by
 * its id: the rules are the list's, applied in SQL, never restated here. A delete cannot be
 * read again: it is sent to a stream that had sent the record; else a soft-deleted record is
 * read with the trash under the same rules, and a hard-deleted one is sent to a stream that no
 * row filter or filter narrows.
 */
export function changeView(
  resource: ResourceDefinition,
  context: ResourceContext,
  caller: QueryCaller | undefined,
  params: URLSearchParams | string = '',
): ChangeView {
  const given = new URLSearchParams(params)
  return changeViewOf(resource, context, recordLookup(resource, context.db), caller, given)
}

function changeViewOf(
  resource: ResourceDefinition,
  { db, counts }: ResourceContext,
  lookup: RecordLookup,
  caller: QueryCaller | undefined,
  given: URLSearchParams,
): ChangeView {
  const params = streamParams(given)
  const seen = new Set<unknown>()
  const narrowed =
    resource.rows?.(caller) !== undefined ||
    [...params.keys()].some((name) => name.startsWith('filter[') || name === 'search')
  const softDelete = resource.softDelete && { ...resource.softDelete, scopes: [] }
  // With the trash: a record restored since its delete was still deleted, and seen.
  const withTrash = new URLSearchParams(params)
  withTrash.set(TRASHED_PARAM, 'with')
  const readOne = (id: unknown, trashed: boolean) =>
    listedRecord(
      resource,
      lookup.key.column,
      id,
      { db, counts, caller, softDelete },
      trashed ? withTrash : params,
    )
  // Everything a row filter may read of the caller, and the stream's parameters.
  const who = caller && [caller.id, caller.scopes, caller.userId, caller.tenantId, caller.clientId]
  const readKey = `${resource.name} ${JSON.stringify(who ?? null)} ${params}`
  /** The message of a change, one object for the streams reading alike (its bytes made once). */
  const changed = (event: ChangeEvent, id: unknown) =>
    once(event, readKey, async (): Promise<StreamMessage | undefined> => {
      const data = await readOne(id, false)
      return data && { event: event.kind, data: { id: event.id, data }, id: event.seq }
    })
  const inTrash = (event: ChangeEvent, id: unknown) =>
    once(event, `${readKey} trash`, async () => (await readOne(id, true)) !== undefined)
  const deletedOf = (event: ChangeEvent) =>
    once(event, 'deleted', async () => ({
      event: 'deleted',
      data: { id: event.id },
      id: event.seq,
    }))
  const remember = (id: unknown) => {
    seen.delete(id)
    seen.add(id)
    if (seen.size > SEEN_IDS) seen.delete(seen.values().next().value)
  }
  return {
    check: () => readOne(undefined, false),
    async read(event: ChangeEvent): Promise<StreamMessage | undefined> {
      const id = lookup.readId(String(event.id))
      if (event.kind === 'deleted') {
        // A record this stream had sent is told gone, hard-deleted from the trash's table too.
        const was = seen.delete(id)
        const visible = was || (softDelete ? await inTrash(event, id) : !narrowed)
        return visible ? deletedOf(event) : undefined
      }
      const message = await changed(event, id)
      if (message) {
        remember(id)
        return message
      }
      // Out of the caller's view now (its row filter, the filter, the trash): its events end.
      return seen.delete(id) ? deletedOf(event) : undefined
    },
  }
}
