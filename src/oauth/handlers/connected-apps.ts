import type { Handler } from 'hono'
import type { OAuthContext } from '../context.ts'
import { OAuthPageError } from '../errors.ts'
import { grantsApi, type OAuthGrants } from '../grants.ts'
import { htmlResponse, redirectResponse } from '../http/page-response.ts'
import { renderConnectedAppsPage } from '../pages/connected-apps.ts'
import { loginRedirect } from './login-redirect.ts'
import { readSessionForm } from './session-form.ts'

/** GET /connected-apps: the signed-in person's connected applications. */
export function connectedAppsHandler(ctx: OAuthContext): Handler {
  const grants = grantsApi(ctx.grants)
  const action = new URL(ctx.endpoints.connectedApps).pathname
  return async function connectedApps(c) {
    const session = await ctx.session(c.req.raw)
    if (!session) return loginRedirect(ctx, action)
    const disconnected = c.req.query('disconnected') === '1'
    return htmlResponse(
      renderConnectedAppsPage({
        appName: ctx.appName,
        apps: await grants.listForUser(session.userId),
        action,
        csrfToken: session.csrfToken,
        scopeDescriptions: ctx.scopeDescriptions,
        ...(disconnected ? { notice: 'The application was disconnected.' } : {}),
      }),
    )
  }
}

/**
 * POST /connected-apps: disconnects one application (every grant the person gave it). The
 * user comes from the session and the form carries its CSRF token; answered 303 to the list.
 */
export function disconnectAppHandler(ctx: OAuthContext): Handler {
  const grants: OAuthGrants = grantsApi(ctx.grants)
  const action = new URL(ctx.endpoints.connectedApps).pathname
  return async function disconnectApp(c) {
    const session = await ctx.session(c.req.raw)
    if (!session) return loginRedirect(ctx, action, 303)
    const form = await readSessionForm(c, session)
    const clientId = form.get('client_id') ?? ''
    if (!clientId || clientId.length > 2000) {
      throw new OAuthPageError(400, 'Invalid request', 'Choose an application to disconnect.')
    }
    const ended = await grants.revokeClientForUser(session.userId, clientId)
    ctx.logger.info({ clientId, userId: session.userId, ended }, 'oauth: application disconnected')
    return redirectResponse(`${action}?disconnected=1`, 303)
  }
}
