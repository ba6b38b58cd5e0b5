/**
 * The names an `@example` of src/ takes as given beside those of snippet-context.ts: what the
 * app made on an earlier line of its own (a table, a request schema, a store, the request's
 * context), so that an example shows one call and still type-checks.
 */
import type { Context } from 'hono'
import type { ResourceOperationsOptions } from 'kilnjs/api'
import type { Queue } from 'kilnjs/core'
import type { DataTools, McpCaller } from 'kilnjs/mcp'
import type { DeduplicationStore, MessagingConfig } from 'kilnjs/messaging'
import type { createBearerValidator } from 'kilnjs/oauth'
import type { PasswordUsers, SessionStore } from 'kilnjs/session'
import type { postsResource as postsDefinition } from '../../examples/demo/src/api/controllers/posts.ts'
import type {
  CreatePostRequest as CreatePost,
  UpdatePostRequest as UpdatePost,
} from '../../examples/demo/src/api/requests/post.ts'
import type { toPostResource as toPost } from '../../examples/demo/src/api/resources/post.ts'
import type { posts as postsTable } from '../../examples/demo/src/schema.ts'

declare global {
  // The demo's table and its request schemas.
  const posts: typeof postsTable
  const CreatePostRequest: typeof CreatePost
  const UpdatePostRequest: typeof UpdatePost
  // The demo's resource definition, its resource shape and what its operations are given.
  const toPostResource: typeof toPost
  const postsResource: typeof postsDefinition
  const db: ResourceOperationsOptions<typeof postsDefinition>['db']
  const counts: ResourceOperationsOptions<typeof postsDefinition>['counts']
  // The stores and services an app builds at start-up.
  const validator: ReturnType<typeof createBearerValidator>
  const tools: DataTools
  const caller: McpCaller
  const sessions: SessionStore
  const accounts: PasswordUsers
  const queue: Queue
  const dedup: DeduplicationStore
  const messagingConfig: MessagingConfig
  const loadOwnerPhones: () => Promise<string[]>
  // Inside a handler: the request's context and its user.
  const c: Context
  const userId: string
}
