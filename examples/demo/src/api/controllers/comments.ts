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
import { comments } from '../../schema.js'
import { CreateCommentRequest, UpdateCommentRequest } from '../requests/comment.js'
import { toCommentResource } from '../resources/comment.js'
import type { ApiContext } from '../routes.js'

/** Scopes a key needs on these routes (`*` passes every check): change them per route here. */
const read = scopeGuard('comments:read')
const write = scopeGuard('comments:write')

/** `/api/v1/comments`: index, show, store, update and destroy. */
export function commentsController({ db, counts }: ApiContext) {
  // Prepared once: a request only binds its values, the SQL is not built again.
  const pageQuery = db
    .select()
    .from(comments)
    .orderBy(comments.id)
    .limit(sql.placeholder('limit'))
    .offset(sql.placeholder('offset'))
    .prepare('kiln_comments_index')
  const showQuery = db
    .select()
    .from(comments)
    .where(eq(comments.id, sql.placeholder('id')))
    .prepare('kiln_comments_show')
  return new Hono<ApiEnv>()
    .get('/', read, async function index(c) {
      const page = parsePageQuery(c.req.query())
      const rows = await pageQuery.execute({ limit: page.perPage, offset: page.offset })
      const total = await counts.total('comments', page, rows.length, db.$count(comments))
      const data = rows.map(toCommentResource)
      return c.json(paginated(data, page, total, c.req.path))
    })
    .post('/', write, async function store(c) {
      const input = await parseJsonBody(c.req.raw, CreateCommentRequest)
      const [comment] = await db
        .insert(comments)
        .values(input)
        .returning()
        .catch(rejectConstraintViolation)
      await counts.invalidate('comments')
      return c.json({ data: toCommentResource(found(comment)) }, 201)
    })
    .get('/:id', read, async function show(c) {
      const id = parseId(c.req.param('id'))
      const [comment] = await showQuery.execute({ id })
      return c.json({ data: toCommentResource(found(comment)) })
    })
    .put('/:id', write, async function update(c) {
      const id = parseId(c.req.param('id'))
      const input = await parseJsonBody(c.req.raw, UpdateCommentRequest)
      const [comment] = await db
        .update(comments)
        .set({ ...input, updatedAt: new Date() })
        .where(eq(comments.id, id))
        .returning()
        .catch(rejectConstraintViolation)
      return c.json({ data: toCommentResource(found(comment)) })
    })
    .delete('/:id', write, async function destroy(c) {
      const id = parseId(c.req.param('id'))
      const [comment] = await db
        .delete(comments)
        .where(eq(comments.id, id))
        .returning()
        .catch(rejectBlockedDelete)
      found(comment)
      await counts.invalidate('comments')
      return c.json({ message: 'Deleted' })
    })
}
