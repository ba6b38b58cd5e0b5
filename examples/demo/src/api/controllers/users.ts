import { and, eq, sql } from 'drizzle-orm'
import { Hono } from 'hono'
import {
  type ApiEnv,
  type ApiKeyInfo,
  checkIfMatch,
  declareRequests,
  defineListQuery,
  found,
  hasMany,
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
import { posts, users } from '../../schema.js'
import { CreateUserRequest, UpdateUserRequest } from '../requests/user.js'
import { toUserResource } from '../resources/user.js'
import type { ApiContext } from '../routes.js'

/** Scopes a key needs on these routes (`*` passes every check): change them per route here. */
const read = scopeGuard('users:read')
const write = scopeGuard('users:write')

/** The primary key as a path or a bulk request names it; one no record can have is a 404. */
const readId = (raw: string) => parseId(raw)

/**
 * What `/api/v1/users` lets a caller read: the fields records show, on every surface
 * (list, show, the answers to writes, `include=` from other resources, the MCP tools, the
 * OpenAPI document: a column left out here is left out of what the resource returns too), the
 * ones `filter[…]` and `sort=` take, the text `search=` looks in and the relations
 * `include=` loads. Sensitive fields are refused.
 */
const usersFields = ['id', 'email', 'name', 'created_at', 'updated_at']

export const usersQuery = defineListQuery(users, {
  fields: usersFields,
  filter: usersFields,
  sort: usersFields,
  search: ['email', 'name'],
  include: {
    posts: hasMany(posts, posts.authorId, users.id),
  },
  resource: toUserResource,
})

/** What create and update take, here and through the MCP tools: the request schemas. */
declareRequests(users, { create: CreateUserRequest, update: UpdateUserRequest })

/**
 * `/api/v1/users`: index, aggregate, show, store (one record or an array), update (PUT or
 * PATCH), destroy, and the bulk updateMany (PATCH `/`) and destroyMany (DELETE `/?ids=`).
 */
export function usersController({ db, counts, hashPassword }: ApiContext) {
  // Prepared on the first request, then reused: a request only binds its id. Not while the
  // routes are built: SQLite reads the table to prepare, and an app started before its
  // migrations ran answers 503 until they do.
  const prepareShow = () =>
    db
      .select()
      .from(users)
      .where(eq(users.id, sql.placeholder('id')))
      .prepare('kiln_users_show')
  let showQuery: ReturnType<typeof prepareShow> | undefined
  /** The record `id` among the rows the caller may reach (the list query's `rows`). */
  const byId = (id: number, caller: ApiKeyInfo) =>
    and(eq(users.id, id), rowsWhere(usersQuery, caller))
  /** The record as the caller may read it: by the prepared query when no row filter applies. */
  const find = async (id: number, caller: ApiKeyInfo) => {
    if (!usersQuery.rows) {
      showQuery ??= prepareShow()
      const [current] = await showQuery.execute({ id })
      return current
    }
    const [current] = await db.select().from(users).where(byId(id, caller))
    return current
  }
  /** The record as `show` answers it: a write's If-Match is compared with its ETag. */
  const shown = async (id: number, caller: ApiKeyInfo) => {
    const current = await find(id, caller)
    return current && { data: usersQuery.record(current) }
  }
  return new Hono<ApiEnv>()
    .get('/', read, async function index(c) {
      // include= reads other resources under their own scopes: the key is the caller. A client
      // that hangs up cancels the query (signal).
      const caller = c.get('apiKey')
      const page = await runListQuery(usersQuery, c.req.url, {
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
      const groups = await runAggregateQuery(usersQuery, c.req.url, {
        db,
        caller,
        signal: c.req.raw.signal,
      })
      return c.json(groups)
    })
    .post('/', write, async function store(c) {
      const { inputs, many } = await parseCreateBody(
        c.req.raw,
        CreateUserRequest,
        async ({ password, ...input }) => ({
          ...input,
          passwordHash: await hashPassword(password),
        }),
      )
      const rows = await db
        .insert(users)
        .values(inputs)
        .returning()
        .catch(rejectConstraintViolation)
      await counts.invalidate('users')
      const data = rows.map(usersQuery.record)
      return c.json({ data: many ? data : found(data[0]) }, 201)
    })
    .get('/:id', read, async function show(c) {
      const id = parseId(c.req.param('id'))
      const user = await find(id, c.get('apiKey'))
      return c.json({ data: usersQuery.record(found(user)) })
    })
    .on(['PUT', 'PATCH'], '/:id', write, async function update(c) {
      const id = parseId(c.req.param('id'))
      const caller = c.get('apiKey')
      const { password, ...input } = await parseJsonBody(c.req.raw, UpdateUserRequest)
      const passwordHash = password === undefined ? undefined : await hashPassword(password)
      await checkIfMatch(c.req.raw, () => shown(id, caller))
      const [user] = await db
        .update(users)
        .set({ ...input, passwordHash, updatedAt: sql`now()` })
        .where(byId(id, caller))
        .returning()
        .catch(rejectConstraintViolation)
      return c.json({ data: usersQuery.record(found(user)) })
    })
    .delete('/:id', write, async function destroy(c) {
      const id = parseId(c.req.param('id'))
      const caller = c.get('apiKey')
      await checkIfMatch(c.req.raw, () => shown(id, caller))
      const [user] = await db
        .delete(users)
        .where(byId(id, caller))
        .returning()
        .catch(rejectBlockedDelete)
      found(user)
      await counts.invalidate('users')
      return c.json({ message: 'Deleted' })
    })
    .patch('/', write, async function updateMany(c) {
      const caller = c.get('apiKey')
      const changes = await parseBulkUpdate(
        c.req.raw,
        UpdateUserRequest,
        readId,
        async ({ password, ...input }) => ({
          ...input,
          passwordHash: password === undefined ? undefined : await hashPassword(password),
        }),
      )
      const rows = await writeEach(db, changes, (tx, { id, input }) =>
        tx
          .update(users)
          .set({ ...input, updatedAt: sql`now()` })
          .where(byId(id, caller))
          .returning(),
      ).catch(rejectConstraintViolation)
      return c.json({ data: rows.map(usersQuery.record) })
    })
    .delete('/', write, async function destroyMany(c) {
      const caller = c.get('apiKey')
      const ids = parseIdList(c.req.raw, readId)
      await writeEach(db, ids, (tx, id) =>
        tx.delete(users).where(byId(id, caller)).returning(),
      ).catch(rejectBlockedDelete)
      await counts.invalidate('users')
      return c.json({ message: 'Deleted', count: ids.length })
    })
}
