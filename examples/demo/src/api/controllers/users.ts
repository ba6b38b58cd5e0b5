import { and, eq, sql } from 'drizzle-orm'
import { Hono } from 'hono'
import {
  type ApiEnv,
  type ApiKeyInfo,
  checkIfMatch,
  defineListQuery,
  found,
  hasMany,
  parseId,
  parseJsonBody,
  rejectBlockedDelete,
  rejectConstraintViolation,
  rowsWhere,
  runAggregateQuery,
  runListQuery,
  scopeGuard,
} from 'kilnjs/api'
import { posts, users } from '../../schema.js'
import { CreateUserRequest, UpdateUserRequest } from '../requests/user.js'
import { toUserResource } from '../resources/user.js'
import type { ApiContext } from '../routes.js'

/** Scopes a key needs on these routes (`*` passes every check): change them per route here. */
const read = scopeGuard('users:read')
const write = scopeGuard('users:write')

/**
 * What `GET /api/v1/users` lets a caller ask for: the fields records show (and `fields=`
 * picks), the ones `filter[…]` and `sort=` take, the text `search=` looks in and the
 * relations `include=` loads. To allow less, give a key a shorter list of its own; sensitive
 * fields are refused.
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

/** `/api/v1/users`: index, aggregate, show, store, update (PUT or PATCH) and destroy. */
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
    return current && { data: toUserResource(current) }
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
      // The caller's row filter applies to aggregates as to the list.
      const caller = c.get('apiKey')
      const groups = await runAggregateQuery(usersQuery, c.req.url, { db, caller })
      return c.json(groups)
    })
    .post('/', write, async function store(c) {
      const { password, ...input } = await parseJsonBody(c.req.raw, CreateUserRequest)
      const [user] = await db
        .insert(users)
        .values({ ...input, passwordHash: await hashPassword(password) })
        .returning()
        .catch(rejectConstraintViolation)
      await counts.invalidate('users')
      return c.json({ data: toUserResource(found(user)) }, 201)
    })
    .get('/:id', read, async function show(c) {
      const id = parseId(c.req.param('id'))
      const user = await find(id, c.get('apiKey'))
      return c.json({ data: toUserResource(found(user)) })
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
      return c.json({ data: toUserResource(found(user)) })
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
}
