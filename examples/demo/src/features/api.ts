import type { Hono } from 'hono'
import {
  createRealtime,
  createRecordCounter,
  type DatabaseApiKeyProvider,
  type Realtime,
} from 'kilnjs/api'
import { apiKeyProvider, apiRoutes, docsRoutes } from '../api/index.ts'
import { hashPassword } from '../auth.ts'
import type { DemoContext } from '../context.ts'

const providers = new WeakMap<DemoContext, DatabaseApiKeyProvider>()

/**
 * The demo's API-key provider, once per context (other features verifying keys share it).
 * It is closed with the context.
 */
export function demoApiKeys(ctx: DemoContext): DatabaseApiKeyProvider {
  let provider = providers.get(ctx)
  if (!provider) {
    const created = apiKeyProvider({ database: ctx.database, logger: ctx.logger })
    ctx.onClose(() => created.close())
    providers.set(ctx, created)
    provider = created
  }
  return provider
}

const realtimes = new WeakMap<DemoContext, Realtime>()

/**
 * The demo's realtime core, once per context: writes publish to it and `GET …/events` streams
 * from it (through Redis when REDIS_URL is set, so every instance sees every change). Its
 * streams end (`{ reason: 'shutdown' }`) when the context closes, before the shared state.
 */
export function demoRealtime(ctx: DemoContext): Realtime {
  let realtime = realtimes.get(ctx)
  if (!realtime) {
    const apiKeys = demoApiKeys(ctx)
    const created = createRealtime({ shared: ctx.shared, apiKeys, logger: ctx.logger })
    ctx.onClose(() => created.close())
    realtimes.set(ctx, created)
    realtime = created
  }
  return realtime
}

/**
 * The generated REST API (`kilnjs make:api --all`, in ../api) under /api/v1, with its OpenAPI
 * document at /api/openapi.json and ReDoc at /api/docs. Rate limits, list totals and the
 * answers kept for `Idempotency-Key` retries live in Redis when REDIS_URL is set, so every
 * instance shares them.
 */
export function mountApi(app: Hono, ctx: DemoContext): void {
  const limiters = ctx.limiters
  const counts = createRecordCounter({ store: ctx.shared.kv })
  const api = apiRoutes({
    database: ctx.database,
    apiKeys: demoApiKeys(ctx),
    limiters,
    counts,
    idempotencyStore: ctx.shared.kv,
    // A user created or updated through the API signs in with the password it was given.
    hashPassword,
    logger: ctx.logger,
    realtime: demoRealtime(ctx),
  })
  app.route('/', api)
  app.route('/', docsRoutes({ app, title: ctx.config.appName }))
}
