import { Hono } from 'hono'
import { errorHandler, healthRoutes, noSniff, requestLog } from 'kilnjs/core'
import { loginRoutes } from 'kilnjs/session'
import { verifyUserCredentials } from './auth.ts'
import type { DemoContext } from './context.ts'
import { demoRealtime } from './features/api.ts'
import { type DemoAppOptions, features } from './features/index.ts'
import { homeRoutes } from './pages/home.ts'

/** The demo's Hono app: pages, login, and every capability's routes. */
export async function createDemoApp(ctx: DemoContext, options: DemoAppOptions = {}): Promise<Hono> {
  const app = new Hono()
  app.onError(errorHandler({ logger: ctx.logger }))
  app.notFound((c) => c.json({ error: 'Not Found' }, 404))
  // A line per request for the person running `npm start`; debug elsewhere (tests, production).
  const requestLevel = ctx.config.env === 'development' ? 'info' : 'debug'
  // nosniff on every answer (/health, the pages, every feature's routes): kiln's default.
  app.use('*', noSniff(), requestLog({ logger: ctx.logger, level: requestLevel }))

  // /health/live for liveness, /health/ready (and /health) for readiness: each within a second,
  // naming the dependency that is down.
  const redis = ctx.shared.client
  app.route(
    '/',
    healthRoutes({
      checks: {
        database: () => ctx.database.ping(),
        ...(redis ? { redis: () => redis.ping() } : {}),
      },
      logger: ctx.logger,
      // Open event streams: what a deploy waits for, or cuts (each ends with its reason).
      details: () => ({ streams: demoRealtime(ctx).status().streams }),
    }),
  )
  app.route('/', homeRoutes(ctx))
  app.route(
    '/',
    loginRoutes({
      sessions: ctx.sessions,
      limiters: ctx.limiters,
      verifyCredentials: verifyUserCredentials(ctx.database),
      appName: ctx.config.appName,
      appUrl: ctx.config.appUrl,
      logger: ctx.logger,
    }),
  )
  for (const mount of features) await mount(app, ctx, options)
  return app
}
