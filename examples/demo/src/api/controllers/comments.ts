import { Hono } from 'hono'
import { type ApiEnv, defineResource, resourceCall, resourceOperations } from 'kilnjs/api'
import { comments } from '../../schema.js'
import { CreateCommentRequest, UpdateCommentRequest } from '../requests/comment.js'
import { toCommentResource } from '../resources/comment.js'
import type { ApiContext } from '../routes.js'

/**
 * `/api/v1/comments`, declared once for every surface (REST, OpenAPI, the MCP tools, `include=`
 * from other resources): the fields records show (a column left out here is left out of what
 * the resource returns too), the ones `filter[…]` and `sort=` take, the text `search=` looks
 * in, and what writes take. `include=` takes the relations the schema's foreign keys give to
 * the other resources. Scopes: `comments:read` and `comments:write` (`scopes` changes them).
 */
const commentsFields = ['id', 'post_id', 'author_name', 'body', 'created_at', 'updated_at']

export const commentsResource = defineResource(comments, {
  fields: commentsFields,
  filter: commentsFields,
  sort: commentsFields,
  search: ['author_name', 'body'],
  resource: toCommentResource,
  requests: { create: CreateCommentRequest, update: UpdateCommentRequest },
})

/**
 * The handlers of `/api/v1/comments`, each one of kiln's operations on `commentsResource`, which
 * reads every declaration above (fields, row filter, If-Match…): replace any with your own.
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
