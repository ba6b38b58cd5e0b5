import type { Hono } from 'hono'
import { approvalPages, createMcpServer, mcpEndpoint, mcpSubscriptions } from 'kilnjs/mcp'
import type { DemoContext } from '../context.ts'
import { demoRealtime } from './api.ts'
import { demoDataTools } from './data-tools.ts'
import type { DemoAppOptions } from './index.ts'
import { demoOAuth } from './oauth.ts'

/**
 * The MCP endpoint at /mcp: Streamable HTTP for both protocol eras, stateless, behind the
 * OAuth bearer middleware. Each request acts as the token's user, within what they granted the
 * client on the consent page (data-tools.ts holds the policy).
 */
export function mountMcp(app: Hono, ctx: DemoContext, options: DemoAppOptions = {}): void {
  const { validator, resourceMetadataUrl } = demoOAuth(ctx)
  const tools = demoDataTools(ctx)
  // Assistants subscribe to posts and comments as they may read them; a 2025 session's
  // subscriptions live in the shared store, so its stream may be held by any instance.
  const subscriptions = mcpSubscriptions({
    watch: tools.watch,
    feed: demoRealtime(ctx).feed,
    store: ctx.shared.kv,
    logger: ctx.logger,
  })
  ctx.onClose(() => subscriptions.close())
  // Where the signed-in author approves or denies a deletion an assistant asked for.
  app.route(
    '/',
    approvalPages({
      store: tools.approvals,
      // The page names the assistant by its registered name and URI (oauth_clients).
      database: ctx.database,
      appUrl: ctx.config.appUrl,
      appName: ctx.config.appName,
      loginPath: '/login',
      allowedOrigins: { hosts: ctx.config.allowedHosts },
      logger: ctx.logger,
      session: async (request) => {
        const session = await ctx.sessions.current(request)
        return session && { userId: session.userId, csrfToken: session.csrfToken }
      },
    }),
  )
  app.route(
    '/mcp',
    mcpEndpoint({
      validator,
      resourceMetadataUrl,
      origins: { appUrl: ctx.config.appUrl, hosts: ctx.config.allowedHosts },
      logger: ctx.logger,
      // Counted with the API's limiters: in Redis, shared by every instance, when REDIS_URL is set.
      rateLimit: { ...options.mcp?.rateLimit, rateLimiters: ctx.limiters },
      // A 2025-era client's answer to an approval question may reach another instance than
      // the call that waits for it: it is routed through the shared store (Redis when set).
      serverRequests: { store: ctx.shared.kv, pubsub: ctx.shared.pubsub },
      subscriptions,
      createServer: (caller) =>
        createMcpServer({
          name: ctx.config.appName,
          dataTools: { tools, caller },
          register: options.mcp?.register,
          logging: options.mcp?.logging,
        }),
    }),
  )
}
