import { Hono } from 'hono'
import { bodyLimit } from '../../core/http/body-limit.ts'
import { type OriginGuardOptions, originGuard } from '../../core/http/origin-guard.ts'
import { noSniff } from '../../core/http/security-headers.ts'
import { type Logger, silentLogger } from '../../core/logger.ts'
import { OAuthPageError, type SessionResolver } from '../../oauth/index.ts'
import {
  escapeHtml,
  htmlResponse,
  layout,
  oauthErrorHandler,
  readSessionForm,
  redirectResponse,
} from '../../oauth/internal.ts'
import { describeChange } from './change.ts'
import type { Approval, ApprovalStore } from './store.ts'

/**
 * Options of `approvalPages`: the data tools' approvals, the app's session and where the
 * pages sit.
 */
export interface ApprovalPagesOptions {
  /** The data tools' approvals (`dataTools.approvals`). */
  store: ApprovalStore
  /** Resolves the signed-in user and CSRF token of a browser request (as `oauthServer`'s). */
  session: SessionResolver
  /** `APP_URL`: form posts from another origin are refused. */
  appUrl: string
  /** Where the pages are mounted. Default `/approvals` (`/approvals/<id>`). */
  path?: string
  /** The login page; receives `?return_to=<relative path>`. Default `/login`. */
  loginPath?: string
  /** The app's name in the page's text. Default `application`. */
  appName?: string
  /** More allowed origins and hosts, as `oauthServer`'s `allowedOrigins`. */
  allowedOrigins?: Omit<OriginGuardOptions, 'appUrl'>
  /** Where the pages' failures are logged. Default: nowhere. */
  logger?: Logger
}

const NOT_FOUND = new OAuthPageError(
  'not_found',
  'No such approval',
  'This approval does not exist, has expired or was already used. Ask the assistant to try again.',
)

/**
 * The page where the signed-in user sees a call an assistant wants to make (tool, model,
 * record, fields and new values) and approves or denies it: GET and POST `<path>/<id>`, in
 * the consent page's style, with its protections (session, CSRF token, Origin and Host). An
 * approval is shown only to the user it was asked for; anyone else sees "No such approval".
 */
export function approvalPages(options: ApprovalPagesOptions): Hono {
  const path = (options.path ?? '/approvals').replace(/\/$/, '')
  const loginPath = options.loginPath ?? '/login'
  const logger = options.logger ?? silentLogger()
  const { store } = options
  const app = new Hono()
  app.onError(oauthErrorHandler({ issuer: options.appUrl, logger }))
  const route = `${path}/:id`
  app.use(route, noSniff(), originGuard({ ...options.allowedOrigins, appUrl: options.appUrl }))

  const login = (id: string, status: 302 | 303) =>
    redirectResponse(
      `${loginPath}${loginPath.includes('?') ? '&' : '?'}return_to=${encodeURIComponent(`${path}/${id}`)}`,
      status,
    )

  app.get(route, async (c) => {
    const id = c.req.param('id') ?? ''
    const session = await options.session(c.req.raw)
    if (!session) return login(id, 302)
    const approval = await store.get(id)
    if (!approval || approval.userId !== session.userId) throw NOT_FOUND
    return htmlResponse(
      renderApprovalPage({
        approval,
        appName: options.appName ?? 'application',
        action: `${path}/${encodeURIComponent(id)}`,
        csrfToken: session.csrfToken,
      }),
    )
  })

  app.post(route, bodyLimit({ maxBytes: 16 * 1024 }), async (c) => {
    const id = c.req.param('id') ?? ''
    const session = await options.session(c.req.raw)
    if (!session) return login(id, 303)
    const form = await readSessionForm(c, session)
    const decision = form.get('decision')
    if (decision !== 'approve' && decision !== 'deny') {
      throw new OAuthPageError('invalid_request', 'Invalid request', 'Choose Approve or Deny.')
    }
    const approval = await store.get(id)
    if (!approval || approval.userId !== session.userId) throw NOT_FOUND
    const status = decision === 'approve' ? 'approved' : 'denied'
    if (!(await store.decide(id, session.userId, status))) {
      throw new OAuthPageError('conflict', 'Already decided', 'This approval was already decided.')
    }
    logger.info(
      { userId: session.userId, clientId: approval.clientId, tool: approval.tool, status },
      'mcp: approval decided',
    )
    return htmlResponse(renderDecidedPage(approval, status))
  })
  return app
}

function renderApprovalPage(params: {
  approval: Approval
  appName: string
  action: string
  csrfToken: string
}): string {
  const { approval } = params
  const change = describeChange(approval)
  if (approval.status !== 'pending') return renderDecidedPage(approval, approval.status)
  const fields =
    change.fields.length === 0
      ? ''
      : `<p>With these values:</p>
<table id="change-fields"><tbody>${change.fields
          .map(
            ([name, value]) =>
              `<tr><th scope="row"><code>${escapeHtml(name)}</code></th><td><code>${escapeHtml(value)}</code></td></tr>`,
          )
          .join('')}</tbody></table>`
  const client = approval.clientId
    ? `<p class="muted">Client ID: <code>${escapeHtml(approval.clientId)}</code></p>`
    : ''
  return layout(
    'Approve a change',
    `<h1>Approve a change</h1>
<p>An assistant connected to your ${escapeHtml(params.appName)} account wants to:</p>
<p id="change-summary"><strong>${escapeHtml(change.summary)}</strong></p>
${fields}
<p class="muted">Tool: <code>${escapeHtml(approval.tool)}</code></p>
${client}
<p class="muted">It runs once, only with exactly these values, if you approve before ${escapeHtml(new Date(approval.expiresAt).toISOString())}.</p>
<form method="post" action="${escapeHtml(params.action)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(params.csrfToken)}">
<div class="actions">
<button type="submit" name="decision" value="deny">Deny</button>
<button type="submit" name="decision" value="approve" class="primary">Approve</button>
</div>
</form>`,
  )
}

function renderDecidedPage(approval: Approval, status: Approval['status']): string {
  const summary = escapeHtml(describeChange(approval).summary)
  const [title, text] =
    status === 'approved'
      ? ['Approved', `You approved: ${summary}. Go back to the assistant: it can now run it once.`]
      : ['Denied', `You denied: ${summary}. Nothing was changed.`]
  return layout(
    title,
    `<h1>${title}</h1>
<p role="status" id="decision">${text}</p>
<p class="muted">You can close this window.</p>`,
  )
}
