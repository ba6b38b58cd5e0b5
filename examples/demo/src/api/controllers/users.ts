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
import { users } from '../../schema.ts'
import { CreateUserRequest, UpdateUserRequest } from '../requests/user.ts'
import { toUserResource } from '../resources/user.ts'
import type { ApiContext } from '../routes.ts'

/** `/api/v1/users`: index, show, store, update and destroy. */
export function usersController({ db, counts }: ApiContext) {
  // Prepared once: a request only binds its values, the SQL is not built again.
  const pageQuery = db
    .select()
    .from(users)
    .orderBy(users.id)
    .limit(sql.placeholder('limit'))
    .offset(sql.placeholder('offset'))
    .prepare('kiln_users_index')
  const showQuery = db
    .select()
    .from(users)
    .where(eq(users.id, sql.placeholder('id')))
    .prepare('kiln_users_show')
  return new Hono<ApiEnv>()
    .get('/', async function index(c) {
      const page = parsePageQuery(c.req.query())
      const rows = await pageQuery.execute({ limit: page.perPage, offset: page.offset })
      const total = await counts.total('users', page, rows.length, db.$count(users))
      const data = rows.map(toUserResource)
      return c.json(paginated(data, page, total, c.req.path))
    })
    .post('/', async function store(c) {
      const input = await parseJsonBody(c.req.raw, CreateUserRequest)
      const [user] = await db
        .insert(users)
        .values(input)
        .returning()
        .catch(rejectConstraintViolation)
      await counts.invalidate('users')
      return c.json({ data: toUserResource(found(user)) }, 201)
    })
    .get('/:id', async function show(c) {
      const id = parseId(c.req.param('id'))
      const [user] = await showQuery.execute({ id })
      return c.json({ data: toUserResource(found(user)) })
    })
    .put('/:id', async function update(c) {
      const id = parseId(c.req.param('id'))
      const input = await parseJsonBody(c.req.raw, UpdateUserRequest)
      const [user] = await db
        .update(users)
        .set({ ...input, updatedAt: new Date() })
        .where(eq(users.id, id))
        .returning()
        .catch(rejectConstraintViolation)
      return c.json({ data: toUserResource(found(user)) })
    })
    .delete('/:id', async function destroy(c) {
      const id = parseId(c.req.param('id'))
      const [user] = await db
        .delete(users)
        .where(eq(users.id, id))
        .returning()
        .catch(rejectBlockedDelete)
      found(user)
      await counts.invalidate('users')
      return c.json({ message: 'Deleted' })
    })
}
