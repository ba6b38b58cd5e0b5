import { Hono } from 'hono'
import {
  type ApiDocsOptions,
  type ApiEnv,
  type ApiKeyProvider,
  apiDocs,
  apiKeyAuth,
  bodyLimit,
  createRecordCounter,
  type OpenApiResource,
  type RateLimiters,
  type RecordCounter,
  throttle,
} from 'kiln/api'
import type { PostgresDatabase } from 'kiln/db'
import { commentsController } from './controllers/comments.ts'
import { messagesController } from './controllers/messages.ts'
import { postsController } from './controllers/posts.ts'
import { usersController } from './controllers/users.ts'
import { CreateCommentRequest, UpdateCommentRequest } from './requests/comment.ts'
import { CreateMessageRequest, UpdateMessageRequest } from './requests/message.ts'
import { CreatePostRequest, UpdatePostRequest } from './requests/post.ts'
import { CreateUserRequest, UpdateUserRequest } from './requests/user.ts'
import { CommentResource } from './resources/comment.ts'
import { MessageResource } from './resources/message.ts'
import { PostResource } from './resources/post.ts'
import { UserResource } from './resources/user.ts'

export interface ApiDeps {
  database: PostgresDatabase
  /** Verifies API keys: `apiKeyProvider({ database })` from ./api-keys.ts, or your own. */
  apiKeys: ApiKeyProvider
  /** From `createRateLimiters()`: the group uses the limiter named `api`. */
  limiters: RateLimiters
  /** Cached list totals; give every instance the same store (Redis) when you run several. */
  counts?: RecordCounter
}

/** What each controller receives. */
export interface ApiContext {
  db: PostgresDatabase['db']
  counts: RecordCounter
}

/** `/api/v1`: every route passes the `api` rate limiter and needs an API key. */
export function apiRoutes({
  database,
  apiKeys,
  limiters,
  counts = createRecordCounter(),
}: ApiDeps) {
  const context: ApiContext = { db: database.db, counts }
  return new Hono<ApiEnv>()
    .basePath('/api/v1')
    .use(throttle(limiters, 'api'))
    .use(apiKeyAuth({ provider: apiKeys }))
    .use(bodyLimit())
    .route('/comments', commentsController(context))
    .route('/messages', messagesController(context))
    .route('/posts', postsController(context))
    .route('/users', usersController(context))
}

/** The resources as the OpenAPI document describes them. */
export const apiResources: OpenApiResource[] = [
  {
    name: 'comments',
    model: 'Comment',
    schema: CommentResource,
    create: CreateCommentRequest,
    update: UpdateCommentRequest,
  },
  {
    name: 'messages',
    model: 'Message',
    schema: MessageResource,
    create: CreateMessageRequest,
    update: UpdateMessageRequest,
  },
  {
    name: 'posts',
    model: 'Post',
    schema: PostResource,
    create: CreatePostRequest,
    update: UpdatePostRequest,
  },
  {
    name: 'users',
    model: 'User',
    schema: UserResource,
    create: CreateUserRequest,
    update: UpdateUserRequest,
  },
]

/** `GET /api/openapi.json` and `GET /api/docs` (ReDoc) for the routes registered on `app`. */
export function docsRoutes({ app, title }: Pick<ApiDocsOptions, 'app' | 'title'>) {
  return apiDocs({ app, title, resources: apiResources })
}
