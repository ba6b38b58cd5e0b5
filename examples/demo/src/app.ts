import { Hono } from 'hono'
import { errorHandler } from 'kiln/core'
import { loginRoutes } from './auth/login.ts'
import type { DemoContext } from './context.ts'
import { features } from './features/index.ts'
import { homeRoutes } from './pages/home.ts'

/** The demo's Hono app: pages, login, and every capability's routes. */
export async function createDemoApp(ctx: DemoContext): Promise<Hono> {
  const app = new Hono()
  app.onError(errorHandler({ logger: ctx.logger }))
  app.notFound((c) => c.json({ error: 'Not Found' }, 404))

  app.get('/health', async (c) => {
    await ctx.database.ping()
    return c.json({ status: 'ok' })
  })
  app.route('/', homeRoutes(ctx))
  app.route('/', loginRoutes(ctx))
  for (const mount of features) await mount(app, ctx)
  return app
}
