import { and, eq, sql } from 'drizzle-orm'
import { Hono } from 'hono'
import {
  type ApiEnv,
  type ApiKeyInfo,
  checkIfMatch,
  declareRequests,
  defineListQuery,
  found,
  parseBulkUpdate,
  parseCreateBody,
  parseId,
  parseIdList,
  parseJsonBody,
  rejectBlockedDelete,
  rejectConstraintViolation,
  rowsWhere,
  runAggregateQuery,
  runListQuery,
  scopeGuard,
  writeEach,
} from 'kilnjs/api'
import { messages } from '../../schema.js'
import { CreateMessageRequest, UpdateMessageRequest } from '../requests/message.js'
import { toMessageResource } from '../resources/message.js'
import type { ApiContext } from '../routes.js'

/** Scopes a key needs on these routes (`*` passes every check): change them per route here. */
const read = scopeGuard('messages:read')
const write = scopeGuard('messages:write')

/** The primary key as a path or a bulk request names it; one no record can have is a 404. */
const readId = (raw: string) => parseId(raw)

/**
 * What `/api/v1/messages` lets a caller read: the fields records show, on every surface
 * (list, show, the answers to writes, `include=` from other resources, the MCP tools, the
 * OpenAPI document: a column left out here is left out of what the resource returns too), the
 * ones `filter[…]` and `sort=` take, the text `search=` looks in and the relations
 * `include=` loads. Sensitive fields are refused.
 */
const messagesFields = [
  'id',
  'wamid',
  'direction',
  'phone',
  'sender_kind',
  'body',
  'status',
  'error_code',
  'sent_at',
  'status_at',
  'created_at',
  'updated_at',
]

export const messagesQuery = defineListQuery(messages, {
  fields: messagesFields,
  filter: messagesFields,
  sort: messagesFields,
  search: ['wamid', 'direction', 'phone', 'sender_kind', 'body', 'status'],
  resource: toMessageResource,
})

/** What create and update take, here and through the MCP tools: the request schemas. */
declareRequests(messages, { create: CreateMessageRequest, update: UpdateMessageRequest })

/**
 * `/api/v1/messages`: index, aggregate, show, store (one record or an array), update (PUT or
 * PATCH), destroy, and the bulk updateMany (PATCH `/`) and destroyMany (DELETE `/?ids=`).
 */
export function messagesController({ db, counts }: ApiContext) {
  // Prepared on the first request, then reused: a request only binds its id. Not while the
  // routes are built: SQLite reads the table to prepare, and an app started before its
  // migrations ran answers 503 until they do.
  const prepareShow = () =>
    db
      .select()
      .from(messages)
      .where(eq(messages.id, sql.placeholder('id')))
      .prepare('kiln_messages_show')
  let showQuery: ReturnType<typeof prepareShow> | undefined
  /** The record `id` among the rows the caller may reach (the list query's `rows`). */
  const byId = (id: number, caller: ApiKeyInfo) =>
    and(eq(messages.id, id), rowsWhere(messagesQuery, caller))
  /** The record as the caller may read it: by the prepared query when no row filter applies. */
  const find = async (id: number, caller: ApiKeyInfo) => {
    if (!messagesQuery.rows) {
      showQuery ??= prepareShow()
      const [current] = await showQuery.execute({ id })
      return current
    }
    const [current] = await db.select().from(messages).where(byId(id, caller))
    return current
  }
  /** The record as `show` answers it: a write's If-Match is compared with its ETag. */
  const shown = async (id: number, caller: ApiKeyInfo) => {
    const current = await find(id, caller)
    return current && { data: messagesQuery.record(current) }
  }
  return new Hono<ApiEnv>()
    .get('/', read, async function index(c) {
      // include= reads other resources under their own scopes: the key is the caller. A client
      // that hangs up cancels the query (signal).
      const caller = c.get('apiKey')
      const page = await runListQuery(messagesQuery, c.req.url, {
        db,
        counts,
        caller,
        signal: c.req.raw.signal,
      })
      return c.json(page)
    })
    .get('/aggregate', read, async function aggregate(c) {
      // The caller's row filter applies to aggregates as to the list; a hang-up cancels it.
      const caller = c.get('apiKey')
      const groups = await runAggregateQuery(messagesQuery, c.req.url, {
        db,
        caller,
        signal: c.req.raw.signal,
      })
      return c.json(groups)
    })
    .post('/', write, async function store(c) {
      const { inputs, many } = await parseCreateBody(c.req.raw, CreateMessageRequest)
      const rows = await db
        .insert(messages)
        .values(inputs)
        .returning()
        .catch(rejectConstraintViolation)
      await counts.invalidate('messages')
      const data = rows.map(messagesQuery.record)
      return c.json({ data: many ? data : found(data[0]) }, 201)
    })
    .get('/:id', read, async function show(c) {
      const id = parseId(c.req.param('id'))
      const message = await find(id, c.get('apiKey'))
      return c.json({ data: messagesQuery.record(found(message)) })
    })
    .on(['PUT', 'PATCH'], '/:id', write, async function update(c) {
      const id = parseId(c.req.param('id'))
      const caller = c.get('apiKey')
      const input = await parseJsonBody(c.req.raw, UpdateMessageRequest)
      await checkIfMatch(c.req.raw, () => shown(id, caller))
      const [message] = await db
        .update(messages)
        .set({ ...input, updatedAt: sql`now()` })
        .where(byId(id, caller))
        .returning()
        .catch(rejectConstraintViolation)
      return c.json({ data: messagesQuery.record(found(message)) })
    })
    .delete('/:id', write, async function destroy(c) {
      const id = parseId(c.req.param('id'))
      const caller = c.get('apiKey')
      await checkIfMatch(c.req.raw, () => shown(id, caller))
      const [message] = await db
        .delete(messages)
        .where(byId(id, caller))
        .returning()
        .catch(rejectBlockedDelete)
      found(message)
      await counts.invalidate('messages')
      return c.json({ message: 'Deleted' })
    })
    .patch('/', write, async function updateMany(c) {
      const caller = c.get('apiKey')
      const changes = await parseBulkUpdate(c.req.raw, UpdateMessageRequest, readId)
      const rows = await writeEach(db, changes, (tx, { id, input }) =>
        tx
          .update(messages)
          .set({ ...input, updatedAt: sql`now()` })
          .where(byId(id, caller))
          .returning(),
      ).catch(rejectConstraintViolation)
      return c.json({ data: rows.map(messagesQuery.record) })
    })
    .delete('/', write, async function destroyMany(c) {
      const caller = c.get('apiKey')
      const ids = parseIdList(c.req.raw, readId)
      await writeEach(db, ids, (tx, id) =>
        tx.delete(messages).where(byId(id, caller)).returning(),
      ).catch(rejectBlockedDelete)
      await counts.invalidate('messages')
      return c.json({ message: 'Deleted', count: ids.length })
    })
}
