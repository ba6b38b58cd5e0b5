import { eq, sql } from 'drizzle-orm'
import { Hono } from 'hono'
import {
  type ApiEnv,
  found,
  paginated,
  parseId,
  parseJsonBody,
  parsePageQuery,
  rejectBlockedDelete,
  rejectConstraintViolation,
  scopeGuard,
} from 'kiln/api'
import { posts } from '../../schema.js'
import { CreatePostRequest, UpdatePostRequest } from '../requests/post.js'
import { toPostResource } from '../resources/post.js'
import type { ApiContext } from '../routes.js'

/** Scopes a key needs on these routes (`*` passes every check): change them per route here. */
const read = scopeGuard('posts:read')
const write = scopeGuard('posts:write')

/** `/api/v1/posts`: index, show, store, update and destroy. */
export function postsController({ db, counts }: ApiContext) {
  // Prepared once: a request only binds its values, the SQL is not built again.
  const pageQuery = db
    .select()
    .from(posts)
    .orderBy(posts.id)
    .limit(sql.placeholder('limit'))
    .offset(sql.placeholder('offset'))
    .prepare('kiln_posts_index')
  const showQuery = db
    .select()
    .from(posts)
    .where(eq(posts.id, sql.placeholder('id')))
    .prepare('kiln_posts_show')
  return new Hono<ApiEnv>()
    .get('/', read, async function index(c) {
      const page = parsePageQuery(c.req.query())
      const rows = await pageQuery.execute({ limit: page.perPage, offset: page.offset })
      const total = await counts.total('posts', page, rows.length, db.$count(posts))
      const data = rows.map(toPostResource)
      return c.json(paginated(data, page, total, c.req.path))
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
      const [post] = await showQuery.execute({ id })
      return c.json({ data: toPostResource(found(post)) })
    })
    .put('/:id', write, async function update(c) {
      const id = parseId(c.req.param('id'))
      const input = await parseJsonBody(c.req.raw, UpdatePostRequest)
      const [post] = await db
        .update(posts)
        .set({ ...input, updatedAt: new Date() })
        .where(eq(posts.id, id))
        .returning()
        .catch(rejectConstraintViolation)
      return c.json({ data: toPostResource(found(post)) })
    })
    .delete('/:id', write, async function destroy(c) {
      const id = parseId(c.req.param('id'))
      const [post] = await db
        .delete(posts)
        .where(eq(posts.id, id))
        .returning()
        .catch(rejectBlockedDelete)
      found(post)
      await counts.invalidate('posts')
      return c.json({ message: 'Deleted' })
    })
}
