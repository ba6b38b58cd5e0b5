import { Hono } from 'hono'
import { type ApiEnv, defineResource, resourceCall, resourceOperations } from 'kilnjs/api'
import { posts } from '../../schema.js'
import { CreatePostRequest, UpdatePostRequest } from '../requests/post.js'
import { toPostResource } from '../resources/post.js'
import type { ApiContext } from '../routes.js'

/**
 * `/api/v1/posts`, declared once for every surface: REST, OpenAPI, the MCP tools
 * and `include=` from other resources. `fields`: what records show (a column left out here is
 * left out of what `resource` returns too); `filter`, `sort`, `search`: what lists take;
 * `requests`: what writes take; `scopes`: what reads (index, show, aggregate) and writes need,
 * `*` passing every check (an operation's own, `destroy: '…'`, goes beside them). `include=`
 * takes the relations the schema's foreign keys give to the other resources.
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

export const postsResource = defineResource(posts, {
  fields: postsFields,
  filter: postsFields,
  sort: postsFields,
  search: ['title', 'body'],
  resource: toPostResource,
  scopes: { read: 'posts:read', write: 'posts:write' },
  requests: { create: CreatePostRequest, update: UpdatePostRequest },
})

/**
 * The handlers of `/api/v1/posts`: each calls kiln's operation, which reads every
 * declaration above (fields, row filter, If-Match…). Replace any with your own code.
 */
export function postsController({ db, counts }: ApiContext) {
  const kiln = resourceOperations(postsResource, { db, counts })
  return new Hono<ApiEnv>()
    .get('/', kiln.scope.index, async function index(c) {
      return c.json(await kiln.index(resourceCall(c)))
    })
    .get('/aggregate', kiln.scope.aggregate, async function aggregate(c) {
      return c.json(await kiln.aggregate(resourceCall(c)))
    })
    .post('/', kiln.scope.store, async function store(c) {
      return c.json(await kiln.store(resourceCall(c)), 201)
    })
    .get('/:id', kiln.scope.show, async function show(c) {
      return c.json(await kiln.show(resourceCall(c)))
    })
    .on(['PUT', 'PATCH'], '/:id', kiln.scope.update, async function update(c) {
      return c.json(await kiln.update(resourceCall(c)))
    })
    .delete('/:id', kiln.scope.destroy, async function destroy(c) {
      return c.json(await kiln.destroy(resourceCall(c)))
    })
    .patch('/', kiln.scope.updateMany, async function updateMany(c) {
      return c.json(await kiln.updateMany(resourceCall(c)))
    })
    .delete('/', kiln.scope.destroyMany, async function destroyMany(c) {
      return c.json(await kiln.destroyMany(resourceCall(c)))
    })
}
