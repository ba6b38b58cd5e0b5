import { Hono } from 'hono'
import {
  type ApiDocsOptions,
  type ApiEnv,
  type ApiKeyProvider,
  apiDocs,
  apiGuard,
  createRecordCounter,
  currentKeyRoutes,
  idempotency,
  type OpenApiResource,
  type RecordCounter,
} from 'kilnjs/api'
import {
  createLogger,
  errorHandler,
  type KeyValueStore,
  type Logger,
  MemoryKeyValueStore,
  type RateLimiters,
} from 'kilnjs/core'
import { type Database, type PostgresDb, postgresDb } from 'kilnjs/db'
import { commentsController, commentsResource } from './controllers/comments.js'
import { messagesController, messagesResource } from './controllers/messages.js'
import { postsController, postsResource } from './controllers/posts.js'
import { usersController, usersResource } from './controllers/users.js'
import { CreateCommentRequest, UpdateCommentRequest } from './requests/comment.js'
import { CreateMessageRequest, UpdateMessageRequest } from './requests/message.js'
import { CreatePostRequest, UpdatePostRequest } from './requests/post.js'
import { CreateUserRequest, UpdateUserRequest } from './requests/user.js'
import { CommentResource } from './resources/comment.js'
import { MessageResource } from './resources/message.js'
import { PostResource } from './resources/post.js'
import { UserResource } from './resources/user.js'

export interface ApiDeps {
  /** What `createDatabase()` returns; it must be a Postgres (PostgreSQL or PGlite) database. */
  database: Database
  /** Verifies API keys: `apiKeyProvider({ database })` from ./api-keys.js, or your own. */
  apiKeys: ApiKeyProvider
  /** From `createRateLimiters()`: the group uses the limiter named `api`. */
  limiters: RateLimiters
  /** Cached list totals; give every instance the same store (Redis) when you run several. */
  counts?: RecordCounter
  /**
   * Where the first answers to POSTs with an `Idempotency-Key` are kept for 24 hours, so a
   * retry gets the same answer: give every instance the same store (`shared.kv`, Redis when
   * REDIS_URL is set). This process's memory by default.
   */
  idempotencyStore?: KeyValueStore
  /**
   * Hashes the `password` a request gives (users) before it is stored: your login's own
   * hasher, so the stored hash is one your login can check. Raw hashes are never accepted.
   */
  hashPassword: (password: string) => Promise<string>
  /** Where server errors (5xx) are logged; standard output by default. */
  logger?: Logger
}

/** What each controller receives. */
export interface ApiContext {
  db: PostgresDb
  counts: RecordCounter
  hashPassword: ApiDeps['hashPassword']
}

/**
 * `/api/v1`: every route needs an API key, then passes the `api` rate limiter, which sees the
 * key (so a limit per key works); requests refused for their key are limited per client IP.
 * Request bodies are read up to 1 MiB (413 past it). Answers are private to the key
 * (`Cache-Control: private, no-cache`), with an `ETag` on GETs (304 when unchanged).
 * All of that is `apiGuard`, one middleware; apps that want the steps apart compose
 * `privateCache()`, `twoStageThrottle()`, `apiKeyAuth()` and `bodyLimit()` themselves.
 * Then `idempotency()` answers a retried POST (same `Idempotency-Key`) with its first answer.
 * Errors answer JSON (401, 403, 404, 422, 429…) through kiln's error handler: mounting the
 * group with `app.route('/', apiRoutes(…))` is enough. `GET /api/v1/keys/self` tells a key
 * its own scopes (the MCP bridge lists only the operations the key may call).
 */
export function apiRoutes({
  database,
  apiKeys,
  limiters,
  counts = createRecordCounter(),
  idempotencyStore = new MemoryKeyValueStore(),
  hashPassword,
  logger = createLogger(),
}: ApiDeps) {
  const context: ApiContext = { db: postgresDb(database), counts, hashPassword }
  return new Hono<ApiEnv>()
    .basePath('/api/v1')
    .onError(errorHandler({ logger }))
    .use(apiGuard({ apiKeys, limiters, limiter: 'api', logger }))
    .use(idempotency({ store: idempotencyStore }))
    .route('/keys', currentKeyRoutes())
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
    query: commentsResource,
  },
  {
    name: 'messages',
    model: 'Message',
    schema: MessageResource,
    create: CreateMessageRequest,
    update: UpdateMessageRequest,
    query: messagesResource,
  },
  {
    name: 'posts',
    model: 'Post',
    schema: PostResource,
    create: CreatePostRequest,
    update: UpdatePostRequest,
    query: postsResource,
  },
  {
    name: 'users',
    model: 'User',
    schema: UserResource,
    create: CreateUserRequest,
    update: UpdateUserRequest,
    query: usersResource,
  },
]

/**
 * `GET /api/openapi.json` and `GET /api/docs` (ReDoc) for the routes registered on `app`;
 * `version` and `description` go into the document's `info`.
 */
export function docsRoutes(
  options: Pick<ApiDocsOptions, 'app' | 'title' | 'version' | 'description'>,
) {
  return apiDocs({ ...options, resources: apiResources })
}
