import { and, eq, sql } from 'drizzle-orm'
import { Hono } from 'hono'
import {
  type ApiEnv,
  type ApiKeyInfo,
  belongsTo,
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
import { comments, posts, users } from '../../schema.js'
import { CreatePostRequest, UpdatePostRequest } from '../requests/post.js'
import { toPostResource } from '../resources/post.js'
import type { ApiContext } from '../routes.js'

/** Scopes a key needs on these routes (`*` passes every check): change them per route here. */
const read = scopeGuard('posts:read')
const write = scopeGuard('posts:write')

/**
 * What `GET /api/v1/posts` lets a caller ask for: the fields records show (and `fields=`
 * picks), the ones `filter[…]` and `sort=` take, the text `search=` looks in and the
 * relations `include=` loads. To allow less, give a key a shorter list of its own; sensitive
 * fields are refused.
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

/** `/api/v1/posts`: index, aggregate, show, store, update (PUT or PATCH) and destroy. */
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
    return current && { data: toPostResource(current) }
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
      // The caller's row filter applies to aggregates as to the list.
      const caller = c.get('apiKey')
      const groups = await runAggregateQuery(postsQuery, c.req.url, { db, caller })
      return c.json(groups)
    })
    .post('/', write, async function store(c) {
      const input = await parseJsonBody(c.req.raw, CreatePostRequest)
      const [post] = await db
        .insert(posts)
        .values(input)
        .returning()
        .catch(rejectConstraintViolation)
      await counts.invalidate('posts')
      return c.json({ data: toPostResource(found(post)) }, 201)
    })
    .get('/:id', read, async function show(c) {
      const id = parseId(c.req.param('id'))
      const post = await find(id, c.get('apiKey'))
      return c.json({ data: toPostResource(found(post)) })
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
      return c.json({ data: toPostResource(found(post)) })
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
}
