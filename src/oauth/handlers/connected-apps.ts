import type { Handler } from 'hono'
import type { AuditRecord } from '../../db/audit/audit-log.ts'
import type { OAuthContext } from '../context.ts'
import { OAuthPageError } from '../errors.ts'
import { type ConnectedApp, grantsApi, type OAuthGrants } from '../grants.ts'
import { htmlResponse, redirectResponse } from '../http/page-response.ts'
import { type AppActivity, renderConnectedAppsPage } from '../pages/connected-apps.ts'
import { loginRedirect } from './login-redirect.ts'
import { readSessionForm } from './session-form.ts'

/** Audit entries shown per application and page. */
export const ACTIVITY_PAGE_SIZE = 10
/** The deepest activity page one can ask for (10,000 entries back). */
const MAX_ACTIVITY_PAGE = 1000

/**
 * GET /connected-apps: the signed-in person's connected applications, each with what it did
 * (with an audit trail: `?app=<client_id>&page=<n>` pages one application's activity).
 */
export function connectedAppsHandler(ctx: OAuthContext): Handler {
  const grants = grantsApi(ctx.grants)
  const action = new URL(ctx.endpoints.connectedApps).pathname
  return async function connectedApps(c) {
    const session = await ctx.session(c.req.raw)
    if (!session) return loginRedirect(ctx, action)
    const paged = activityPageOf(c.req.query('app'), c.req.query('page'))
    const disconnected = c.req.query('disconnected') === '1'
    const apps = await grants.listForUser(session.userId)
    const activity = ctx.activity
      ? await Promise.all(apps.map((app) => activityOf(ctx, session.userId, app, paged)))
      : undefined
    return htmlResponse(
      renderConnectedAppsPage({
        appName: ctx.appName,
        apps,
        action,
        csrfToken: session.csrfToken,
        scopeDescriptions: ctx.scopeDescriptions,
        ...(activity ? { activity } : {}),
        ...(disconnected ? { notice: 'Access was revoked for the application.' } : {}),
      }),
    )
  }
}

/** `?app=&page=`, checked: a bad page number is a 400, not a guess. */
function activityPageOf(
  app: string | undefined,
  page: string | undefined,
): { clientId: string; page: number } | undefined {
  if (app === undefined && page === undefined) return undefined
  const number = page === undefined ? 1 : Number(page)
  if (
    !app ||
    app.length > 2000 ||
    !/^\d+$/.test(page ?? '1') ||
    number < 1 ||
    number > MAX_ACTIVITY_PAGE
  ) {
    throw new OAuthPageError(
      'invalid_request',
      'Invalid request',
      `Name an application and a page number from 1 to ${MAX_ACTIVITY_PAGE}.`,
    )
  }
  return { clientId: app, page: number }
}

async function activityOf(
  ctx: OAuthContext,
  userId: string,
  app: ConnectedApp,
  paged: { clientId: string; page: number } | undefined,
): Promise<AppActivity> {
  const page = paged?.clientId === app.clientId ? paged.page : 1
  const entries: AuditRecord[] = await ctx.activity!.list({
    userId,
    clientId: app.clientId,
    limit: ACTIVITY_PAGE_SIZE + 1,
    offset: (page - 1) * ACTIVITY_PAGE_SIZE,
  })
  // The newest call is the last use when it is later than the last token the app got.
  const newest = page === 1 ? entries[0]?.at : undefined
  return {
    clientId: app.clientId,
    entries: entries.slice(0, ACTIVITY_PAGE_SIZE),
    page,
    hasOlder: entries.length > ACTIVITY_PAGE_SIZE,
    lastCallAt: newest,
  }
}

/**
 * POST /connected-apps: revokes one application (every grant the person gave it, and with them
 * its tokens). The user comes from the session and the form carries its CSRF token; answered
 * 303 to the list.
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
      throw new OAuthPageError(
        'invalid_request',
        'Invalid request',
        'Choose an application to revoke.',
      )
    }
    const ended = await grants.revokeClientForUser(session.userId, clientId)
    ctx.logger.info({ clientId, userId: session.userId, ended }, 'oauth: application revoked')
    return redirectResponse(`${action}?disconnected=1`, 303)
  }
}
