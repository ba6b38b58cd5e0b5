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
} from 'kiln/api'
import { messages } from '../../schema.ts'
import { CreateMessageRequest, UpdateMessageRequest } from '../requests/message.ts'
import { toMessageResource } from '../resources/message.ts'
import type { ApiContext } from '../routes.ts'

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
    .get('/', async function index(c) {
      const page = parsePageQuery(c.req.query())
      const rows = await pageQuery.execute({ limit: page.perPage, offset: page.offset })
      const total = await counts.total('messages', page, rows.length, db.$count(messages))
      const data = rows.map(toMessageResource)
      return c.json(paginated(data, page, total, c.req.path))
    })
    .post('/', async function store(c) {
      const input = await parseJsonBody(c.req.raw, CreateMessageRequest)
      const [message] = await db
        .insert(messages)
        .values(input)
        .returning()
        .catch(rejectConstraintViolation)
      await counts.invalidate('messages')
      return c.json({ data: toMessageResource(found(message)) }, 201)
    })
    .get('/:id', async function show(c) {
      const id = parseId(c.req.param('id'))
      const [message] = await showQuery.execute({ id })
      return c.json({ data: toMessageResource(found(message)) })
    })
    .put('/:id', async function update(c) {
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
    .delete('/:id', async function destroy(c) {
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
