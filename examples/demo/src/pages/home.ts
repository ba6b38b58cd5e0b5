import { Hono } from 'hono'
import { html } from 'hono/html'
import type { DemoContext } from '../context.ts'
import { page, pageHeaders } from './layout.ts'

/** `/`: what the demo serves, and who is signed in. */
export function homeRoutes(ctx: DemoContext): Hono {
  const app = new Hono()
  app.get('/', async (c) => {
    pageHeaders(c)
    const session = await ctx.sessions.current(c.req.raw)
    const base = ctx.config.appUrl
    return c.html(
      page(
        ctx.config.appName,
        html`<p>A kiln demo app: a generated REST API, an OAuth 2.1 server for MCP clients,
          messaging webhooks and file storage.</p>
          <table>
            <tr><th>REST API docs</th><td><a href="/api/docs">${base}/api/docs</a></td></tr>
            <tr><th>OpenAPI document</th><td><a href="/api/openapi.json">${base}/api/openapi.json</a></td></tr>
            <tr><th>MCP endpoint</th><td><code>${base}/mcp</code></td></tr>
            <tr><th>OAuth metadata</th><td><a href="/.well-known/oauth-authorization-server">${base}/.well-known/oauth-authorization-server</a></td></tr>
            <tr><th>Messages</th><td><a href="/messages">${base}/messages</a></td></tr>
          </table>
          ${
            session
              ? html`<p>Signed in (user ${session.userId}).</p>
                  <form method="post" action="/logout">
                    <input type="hidden" name="csrf_token" value="${session.csrfToken}" />
                    <button type="submit">Sign out</button>
                  </form>`
              : html`<p><a href="/login">Sign in</a> as the demo user.</p>`
          }`,
      ),
    )
  })
  return app
}
