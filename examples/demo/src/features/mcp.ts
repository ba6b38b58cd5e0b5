import type { Hono } from 'hono'
import { createMcpServer, mcpEndpoint } from 'kiln/mcp'
import type { DemoContext } from '../context.ts'
import { demoOAuth } from './oauth.ts'

/**
 * The MCP endpoint at /mcp: Streamable HTTP, stateless, behind the OAuth bearer middleware.
 * Each request gets the data tools over the demo's models, acting as the token's user and tenant.
 */
export function mountMcp(app: Hono, ctx: DemoContext): void {
  const { validator, resourceMetadataUrl } = demoOAuth(ctx)
  app.route(
    '/mcp',
    mcpEndpoint({
      validator,
      resourceMetadataUrl,
      scopes: ['mcp:read'],
      logger: ctx.logger,
      createServer: (caller) =>
        createMcpServer({
          name: ctx.config.appName,
          data: { database: ctx.database, models: ctx.models, caller, logger: ctx.logger },
        }),
    }),
  )
}
