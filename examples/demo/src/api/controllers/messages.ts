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
import { messages } from '../../schema.js'
import { CreateMessageRequest, UpdateMessageRequest } from '../requests/message.js'
import { toMessageResource } from '../resources/message.js'
import type { ApiContext } from '../routes.js'

/** Scopes a key needs on these routes (`*` passes every check): change them per route here. */
const read = scopeGuard('messages:read')
const write = scopeGuard('messages:write')

/** `/api/v1/messages`: index, show, store, update and destroy. */
export function messagesController({ db, counts }: ApiContext) {
  // Prepared once: a request only binds its values, the SQL is not built again.
  const pageQuery = db
    .select()
    .from(messages)
    .orderBy(messages.id)
    .limit(sql.placeholder('limit'))
    .offset(sql.placeholder('offset'))
    .prepare('kiln_messages_index')
  const showQuery = db
    .select()
    .from(messages)
    .where(eq(messages.id, sql.placeholder('id')))
    .prepare('kiln_messages_show')
  return new Hono<ApiEnv>()
    .get('/', read, async function index(c) {
      const page = parsePageQuery(c.req.query())
      const rows = await pageQuery.execute({ limit: page.perPage, offset: page.offset })
      const total = await counts.total('messages', page, rows.length, db.$count(messages))
      const data = rows.map(toMessageResource)
      return c.json(paginated(data, page, total, c.req.path))
    })
    .post('/', write, async function store(c) {
      const input = await parseJsonBody(c.req.raw, CreateMessageRequest)
      const [message] = await db
        .insert(messages)
        .values(input)
        .returning()
        .catch(rejectConstraintViolation)
      await counts.invalidate('messages')
      return c.json({ data: toMessageResource(found(message)) }, 201)
    })
    .get('/:id', read, async function show(c) {
      const id = parseId(c.req.param('id'))
      const [message] = await showQuery.execute({ id })
      return c.json({ data: toMessageResource(found(message)) })
    })
    .put('/:id', write, async function update(c) {
      const id = parseId(c.req.param('id'))
      const input = await parseJsonBody(c.req.raw, UpdateMessageRequest)
      const [message] = await db
        .update(messages)
        .set({ ...input, updatedAt: new Date() })
        .where(eq(messages.id, id))
        .returning()
        .catch(rejectConstraintViolation)
      return c.json({ data: toMessageResource(found(message)) })
    })
    .delete('/:id', write, async function destroy(c) {
      const id = parseId(c.req.param('id'))
      const [message] = await db
        .delete(messages)
        .where(eq(messages.id, id))
        .returning()
        .catch(rejectBlockedDelete)
      found(message)
      await counts.invalidate('messages')
      return c.json({ message: 'Deleted' })
    })
}
