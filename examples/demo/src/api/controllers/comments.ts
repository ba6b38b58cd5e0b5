import { Hono } from 'hono'
import { type ApiEnv, defineResource, resourceCall, resourceOperations } from 'kilnjs/api'
import { comments } from '../../schema.js'
import { CreateCommentRequest, UpdateCommentRequest } from '../requests/comment.js'
import { toCommentResource } from '../resources/comment.js'
import type { ApiContext } from '../routes.js'

/**
 * `/api/v1/comments`, declared once for every surface: REST, OpenAPI, the MCP tools
 * and `include=` from other resources. `fields`: what records show (a column left out here is
 * left out of what `resource` returns too); `filter`, `sort`, `search`: what lists take;
 * `requests`: what writes take; `scopes`: what reads (index, show, aggregate) and writes need,
 * `*` passing every check (an operation's own, `destroy: '…'`, goes beside them). `include=`
 * takes the relations the schema's foreign keys give to the other resources.
 */
const commentsFields = ['id', 'post_id', 'author_name', 'body', 'created_at', 'updated_at']

export const commentsResource = defineResource(comments, {
  fields: commentsFields,
  filter: commentsFields,
  sort: commentsFields,
  search: ['author_name', 'body'],
  resource: toCommentResource,
  scopes: { read: 'comments:read', write: 'comments:write' },
  requests: { create: CreateCommentRequest, update: UpdateCommentRequest },
})

/**
 * The handlers of `/api/v1/comments`: each calls kiln's operation, which reads every
 * declaration above (fields, row filter, If-Match…). Replace any with your own code.
 */
export function commentsController({ db, counts }: ApiContext) {
  const kiln = resourceOperations(commentsResource, { db, counts })
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
