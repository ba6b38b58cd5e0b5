import { and, eq } from 'drizzle-orm'
import { rowsWhere } from '../query/definition.ts'
import type { Row } from '../query/types.ts'
import type { ChangeKind, Realtime } from '../realtime/index.ts'
import { parseJsonBody } from '../rest/body.ts'
import { parseBulkUpdate, parseCreateBody, parseIdList, writeEach } from '../rest/bulk.ts'
import { rejectBlockedDelete, rejectConstraintViolation } from '../rest/db-errors.ts'
import { found } from '../rest/ids.ts'
import { checkIfMatch } from '../rest/preconditions.ts'
import { hasFields } from '../rest/rename-keys.ts'
import type { ResourceCall, ResourceContext, WriteCall } from './call.ts'
import type { ResourceDefinition } from './define.ts'
import type { AnyDb, RecordLookup } from './records.ts'
import { timestampsOf, timestampValue } from './values.ts'

type Prepare = ((input: object) => object | Promise<object>) | undefined

/** store, update, destroy, the bulk updateMany and destroyMany, and restore. */
export function writeOperations(
  resource: ResourceDefinition,
  context: ResourceContext,
  lookup: RecordLookup,
  prepare: Prepare,
) {
  const kit = writeKit(resource, context, lookup, prepare)
  return { ...recordWrites(kit), ...bulkWrites(kit) }
}

type WriteKit = ReturnType<typeof writeKit>

/** What every write shares: the resource, its lookup and statements, the change feed. */
function writeKit(
  resource: ResourceDefinition,
  { db, counts, realtime }: ResourceContext,
  lookup: RecordLookup,
  prepare: Prepare,
) {
  const { table, softDelete } = resource
  const { byId } = lookup
  /** Delete, or (soft delete) move to the trash: the statement, and its error mapping. */
  const removal = (via: AnyDb, id: unknown, call: WriteCall, now: Date) => {
    if (!softDelete) return via.delete(table).where(byId(id, call.caller)).returning()
    const trashedAt = timestampValue(columnInfo(resource, softDelete.column), resource.dialect, now)
    return via
      .update(table)
      .set({ [keyOf(resource, softDelete.column)]: trashedAt })
      .where(byId(id, call.caller))
      .returning()
  }
  const record = (row: Row) => resource.record(row as never)
  return {
    resource,
    db,
    loose: db as AnyDb,
    counts,
    lookup,
    prepare,
    record,
    stamps: timestampsOf(resource),
    removal,
    rejectRemoval: softDelete ? rejectConstraintViolation : rejectBlockedDelete,
    /** The record as `show` answers it: a write's If-Match is compared with its ETag. */
    shown: async (call: WriteCall, id: unknown) => {
      const row = await lookup.find(id, call.caller)
      return row && { data: record(row) }
    },
    ...changeFeedOf(resource, realtime, lookup),
  }
}

/** The writes of one record: `store` (or an array of them), `update`, `destroy`. */
function recordWrites(kit: WriteKit) {
  const { resource, loose, counts, lookup, prepare, record, stamps, changed, idsOf, shown } = kit
  const { table, tableName } = resource
  const { byId, readId } = lookup
  return {
    /** `POST /`: one record, or an array of them (all or none). */
    async store(call: WriteCall) {
      const now = new Date()
      const created = stamps.created(now)
      const { inputs, many } = call.input
        ? { inputs: [await withPrepared(prepare, call.input, created)], many: false }
        : await parseCreateBody(requestOf(call), createSchema(resource), (input) =>
            withPrepared(prepare, input as object, created),
          )
      const rows: Row[] = await loose
        .insert(table)
        .values(inputs)
        .returning()
        .catch(rejectConstraintViolation)
      await counts.invalidate(tableName)
      await changed('created', idsOf(rows))
      const data = rows.map(record)
      return { data: many ? data : found(data[0]) }
    },

    /** `PUT` or `PATCH /{id}`: the fields given change (If-Match checked first). */
    async update(call: WriteCall) {
      const id = readId(call.id)
      const input = call.input ?? (await parseJsonBody(requestOf(call), updateSchema(resource)))
      const values = await withPrepared(prepare, input as object, {})
      if (call.request) await checkIfMatch(call.request, () => shown(call, id))
      const set = { ...values, ...stamps.updated(new Date()) }
      // Nothing to write (an empty body, no updated_at): the record as it is.
      const [row]: Row[] = hasFields(set)
        ? await loose
            .update(table)
            .set(set)
            .where(byId(id, call.caller))
            .returning()
            .catch(rejectConstraintViolation)
        : await loose.select().from(table).where(byId(id, call.caller))
      if (row && hasFields(set)) await changed('updated', [id])
      return { data: record(found(row)) }
    },

    /** `DELETE /{id}`: deleted, or moved to the trash (soft delete); If-Match checked first. */
    async destroy(call: WriteCall) {
      const id = readId(call.id)
      if (call.request) await checkIfMatch(call.request, () => shown(call, id))
      const [row] = await kit.removal(loose, id, call, new Date()).catch(kit.rejectRemoval)
      found(row)
      await counts.invalidate(tableName)
      await changed('deleted', [id])
      return { message: 'Deleted' }
    },
  }
}

/** The writes of many records, all or none (`updateMany`, `destroyMany`), and `restore`. */
function bulkWrites(kit: WriteKit) {
  const { resource, db, loose, counts, lookup, prepare, record, stamps, changed, idsOf } = kit
  const { table, tableName, softDelete } = resource
  const { byId, readId } = lookup
  return {
    /** `PATCH /`: `[{ id, ...changes }]`, all or none, in one transaction. */
    async updateMany(call: ResourceCall) {
      const changes = await parseBulkUpdate(call.request, updateSchema(resource), readId, (input) =>
        withPrepared(prepare, input as object, {}),
      )
      const touched = stamps.updated(new Date())
      const rows = await writeEach(db, changes, (tx: AnyDb, { id, input }) =>
        tx
          .update(table)
          .set({ ...input, ...touched })
          .where(byId(id, call.caller))
          .returning(),
      ).catch(rejectConstraintViolation)
      await changed('updated', idsOf(rows as Row[]))
      return { data: rows.map((row) => record(row as Row)) }
    },

    /** `DELETE /?ids=1,2,3`: all or none, in one transaction. */
    async destroyMany(call: ResourceCall) {
      const ids = parseIdList(call.request, readId)
      const now = new Date()
      await writeEach(db, ids, (tx: AnyDb, id) => kit.removal(tx, id, call, now)).catch(
        kit.rejectRemoval,
      )
      await counts.invalidate(tableName)
      await changed('deleted', ids)
      return { message: 'Deleted', count: ids.length }
    },

    /** `POST /{id}/restore`: out of the trash (a record not in it stays as it is). */
    async restore(call: ResourceCall) {
      const id = readId(call.id)
      const column = softDelete!.column
      const [row]: Row[] = await loose
        .update(table)
        .set({ [keyOf(resource, column)]: null })
        .where(and(eq(lookup.key.column, id), rowsWhere(resource, call.caller)))
        .returning()
        .catch(rejectConstraintViolation)
      await counts.invalidate(tableName)
      if (row) await changed('restored', [id])
      return { data: record(found(row)) }
    },
  }
}

/**
 * The one place writes reach the change feed: after their commit, one change per record
 * written (a soft delete is `deleted`: the record leaves every read). Ids only; each stream
 * reads the record under its own caller's policy.
 */
function changeFeedOf(
  resource: ResourceDefinition,
  realtime: Realtime | undefined,
  lookup: RecordLookup,
) {
  const { name, tableName: table } = resource
  return {
    async changed(kind: ChangeKind, ids: unknown[]) {
      if (!realtime || ids.length === 0) return
      await realtime.publish(ids.map((id) => ({ resource: name, table, kind, id })))
    },
    idsOf: (rows: Row[]) => rows.map((row) => row[lookup.key.key]),
  }
}

async function withPrepared(prepare: Prepare, input: object, extra: object): Promise<object> {
  return { ...(prepare ? await prepare(input) : input), ...extra }
}

function requestOf(call: WriteCall): Request {
  if (!call.request) throw new TypeError('a write call needs its request or its input')
  return call.request
}

function createSchema(resource: ResourceDefinition) {
  if (!resource.create) throw new TypeError(`${resource.name}: store needs requests.create`)
  return resource.create
}

function updateSchema(resource: ResourceDefinition) {
  if (!resource.update) throw new TypeError(`${resource.name}: update needs requests.update`)
  return resource.update
}

function fieldOf(resource: ResourceDefinition, column: unknown) {
  return [...resource.columns.values()].find((field) => field.column === column)!
}

function keyOf(resource: ResourceDefinition, column: unknown): string {
  return fieldOf(resource, column).key
}

function columnInfo(resource: ResourceDefinition, column: unknown) {
  return fieldOf(resource, column).info
}
