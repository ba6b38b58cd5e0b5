import { and, eq, sql } from 'drizzle-orm'
import { Hono } from 'hono'
import {
  type ApiEnv,
  type ApiKeyInfo,
  belongsTo,
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
import { comments, posts, users } from '../../schema.js'
import { CreatePostRequest, UpdatePostRequest } from '../requests/post.js'
import { toPostResource } from '../resources/post.js'
import type { ApiContext } from '../routes.js'

/** Scopes a key needs on these routes (`*` passes every check): change them per route here. */
const read = scopeGuard('posts:read')
const write = scopeGuard('posts:write')

/** The primary key as a path or a bulk request names it; one no record can have is a 404. */
const readId = (raw: string) => parseId(raw)

/**
 * What `/api/v1/posts` lets a caller read: the fields records show, on every surface
 * (list, show, the answers to writes, `include=` from other resources, the MCP tools, the
 * OpenAPI document: a column left out here is left out of what the resource returns too), the
 * ones `filter[…]` and `sort=` take, the text `search=` looks in and the relations
 * `include=` loads. Sensitive fields are refused.
 */
const postsFields = [
  'id',
  'title',
  'body',
  'published',
  'token_count',
  'author_id',
  'created_at',
  'updated_at',
]

export const postsQuery = defineListQuery(posts, {
  fields: postsFields,
  filter: postsFields,
  sort: postsFields,
  search: ['title', 'body'],
  include: {
    author: belongsTo(users, posts.authorId, users.id),
    comments: hasMany(comments, comments.postId, posts.id),
  },
  resource: toPostResource,
})

/** What create and update take, here and through the MCP tools: the request schemas. */
declareRequests(posts, { create: CreatePostRequest, update: UpdatePostRequest })

/**
 * `/api/v1/posts`: index, aggregate, show, store (one record or an array), update (PUT or
 * PATCH), destroy, and the bulk updateMany (PATCH `/`) and destroyMany (DELETE `/?ids=`).
 */
export function postsController({ db, counts }: ApiContext) {
  // Prepared on the first request, then reused: a request only binds its id. Not while the
  // routes are built: SQLite reads the table to prepare, and an app started before its
  // migrations ran answers 503 until they do.
  const prepareShow = () =>
    db
      .select()
      .from(posts)
      .where(eq(posts.id, sql.placeholder('id')))
      .prepare('kiln_posts_show')
  let showQuery: ReturnType<typeof prepareShow> | undefined
  /** The record `id` among the rows the caller may reach (the list query's `rows`). */
  const byId = (id: number, caller: ApiKeyInfo) =>
    and(eq(posts.id, id), rowsWhere(postsQuery, caller))
  /** The record as the caller may read it: by the prepared query when no row filter applies. */
  const find = async (id: number, caller: ApiKeyInfo) => {
    if (!postsQuery.rows) {
      showQuery ??= prepareShow()
      const [current] = await showQuery.execute({ id })
      return current
    }
    const [current] = await db.select().from(posts).where(byId(id, caller))
    return current
  }
  /** The record as `show` answers it: a write's If-Match is compared with its ETag. */
  const shown = async (id: number, caller: ApiKeyInfo) => {
    const current = await find(id, caller)
    return current && { data: postsQuery.record(current) }
  }
  return new Hono<ApiEnv>()
    .get('/', read, async function index(c) {
      // include= reads other resources under their own scopes: the key is the caller. A client
      // that hangs up cancels the query (signal).
      const caller = c.get('apiKey')
      const page = await runListQuery(postsQuery, c.req.url, {
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
      const groups = await runAggregateQuery(postsQuery, c.req.url, {
        db,
        caller,
        signal: c.req.raw.signal,
      })
      return c.json(groups)
    })
    .post('/', write, async function store(c) {
      const { inputs, many } = await parseCreateBody(c.req.raw, CreatePostRequest)
      const rows = await db
        .insert(posts)
        .values(inputs)
        .returning()
        .catch(rejectConstraintViolation)
      await counts.invalidate('posts')
      const data = rows.map(postsQuery.record)
      return c.json({ data: many ? data : found(data[0]) }, 201)
    })
    .get('/:id', read, async function show(c) {
      const id = parseId(c.req.param('id'))
      const post = await find(id, c.get('apiKey'))
      return c.json({ data: postsQuery.record(found(post)) })
    })
    .on(['PUT', 'PATCH'], '/:id', write, async function update(c) {
      const id = parseId(c.req.param('id'))
      const caller = c.get('apiKey')
      const input = await parseJsonBody(c.req.raw, UpdatePostRequest)
      await checkIfMatch(c.req.raw, () => shown(id, caller))
      const [post] = await db
        .update(posts)
        .set({ ...input, updatedAt: sql`now()` })
        .where(byId(id, caller))
        .returning()
        .catch(rejectConstraintViolation)
      return c.json({ data: postsQuery.record(found(post)) })
    })
    .delete('/:id', write, async function destroy(c) {
      const id = parseId(c.req.param('id'))
      const caller = c.get('apiKey')
      await checkIfMatch(c.req.raw, () => shown(id, caller))
      const [post] = await db
        .delete(posts)
        .where(byId(id, caller))
        .returning()
        .catch(rejectBlockedDelete)
      found(post)
      await counts.invalidate('posts')
      return c.json({ message: 'Deleted' })
    })
    .patch('/', write, async function updateMany(c) {
      const caller = c.get('apiKey')
      const changes = await parseBulkUpdate(c.req.raw, UpdatePostRequest, readId)
      const rows = await writeEach(db, changes, (tx, { id, input }) =>
        tx
          .update(posts)
          .set({ ...input, updatedAt: sql`now()` })
          .where(byId(id, caller))
          .returning(),
      ).catch(rejectConstraintViolation)
      return c.json({ data: rows.map(postsQuery.record) })
    })
    .delete('/', write, async function destroyMany(c) {
      const caller = c.get('apiKey')
      const ids = parseIdList(c.req.raw, readId)
      await writeEach(db, ids, (tx, id) =>
        tx.delete(posts).where(byId(id, caller)).returning(),
      ).catch(rejectBlockedDelete)
      await counts.invalidate('posts')
      return c.json({ message: 'Deleted', count: ids.length })
    })
}
