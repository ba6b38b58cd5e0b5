import { Hono } from 'hono'
import { bodyLimit } from '../../core/http/body-limit.ts'
import { type OriginGuardOptions, originGuard } from '../../core/http/origin-guard.ts'
import { noSniff } from '../../core/http/security-headers.ts'
import { type Logger, silentLogger } from '../../core/logger.ts'
import type { Database } from '../../db/index.ts'
import { type ClientStore, OAuthPageError, type SessionResolver } from '../../oauth/index.ts'
import {
  createDatabaseClientStore,
  escapeHtml,
  htmlResponse,
  layout,
  oauthErrorHandler,
  readSessionForm,
  redirectResponse,
} from '../../oauth/internal.ts'
import { describeChange } from './change.ts'
import { fieldChanges } from './preview.ts'
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
  /**
   * The app's database (`oauth_clients`), or its registered clients: the page names the
   * assistant by its registered name and URI. Without either it shows the client id only.
   */
  database?: Database
  clients?: ClientStore
}

const NOT_FOUND = new OAuthPageError(
  'not_found',
  'No such approval',
  'This approval does not exist, has expired or was already used. Ask the assistant to try again.',
)

/**
 * The page where the signed-in user sees a call an assistant wants to make (which assistant,
 * the record as they may read it, the values it writes, when the request expires) and
 * approves or denies it: GET and POST `<path>/<id>`, in
 * the consent page's style, with its protections (session, CSRF token, Origin and Host). An
 * approval is shown only to the user it was asked for; anyone else sees "No such approval".
 * @example
 * ```ts
 * app.route(
 *   '/',
 *   approvalPages({
 *     store: tools.approvals,
 *     appUrl: oauthConfig.issuer,
 *     session: (request) => sessions.current(request),
 *     logger,
 *   }),
 * )
 * ```
 */
export function approvalPages(options: ApprovalPagesOptions): Hono {
  const path = (options.path ?? '/approvals').replace(/\/$/, '')
  const loginPath = options.loginPath ?? '/login'
  const logger = options.logger ?? silentLogger()
  const { store } = options
  const clients =
    options.clients ?? (options.database ? createDatabaseClientStore(options.database) : undefined)
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
        client: await clientOf(clients, approval.clientId),
        now: Date.now(),
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

/** The client an approval came through, as the page names it. */
interface ClientShown {
  id: string
  name: string | undefined
  uri: string | undefined
}

async function clientOf(
  clients: ClientStore | undefined,
  clientId: string | undefined,
): Promise<ClientShown | undefined> {
  if (!clientId) return undefined
  const client = await clients?.get(clientId).catch(() => undefined)
  const uri = client?.metadata.client_uri
  return {
    id: clientId,
    name: client?.clientName,
    uri: typeof uri === 'string' && /^https?:\/\//.test(uri) ? uri : undefined,
  }
}

/** "in 9 minutes", "in 40 seconds": how long is left, in words. */
export function timeLeftInWords(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000))
  if (seconds < 60) return `in ${seconds} second${seconds === 1 ? '' : 's'}`
  const minutes = Math.round(seconds / 60)
  if (minutes < 60) return `in ${minutes} minute${minutes === 1 ? '' : 's'}`
  const hours = Math.round(minutes / 60)
  return `in ${hours} hour${hours === 1 ? '' : 's'}`
}

function renderApprovalPage(params: {
  approval: Approval
  client: ClientShown | undefined
  appName: string
  action: string
  csrfToken: string
  now: number
}): string {
  const { approval, client } = params
  const change = describeChange(approval)
  if (approval.status !== 'pending') return renderDecidedPage(approval, approval.status)
  const expiresAt = new Date(approval.expiresAt).toISOString()
  const who = client
    ? `<p id="client">Requested by <strong>${escapeHtml(client.name ?? 'an unnamed assistant')}</strong>${
        client.uri
          ? ` (<a href="${escapeHtml(client.uri)}" rel="noreferrer">${escapeHtml(client.uri)}</a>)`
          : ''
      }</p>
<p class="muted">Client ID: <code>${escapeHtml(client.id)}</code></p>`
    : ''
  return layout(
    'Approve a change',
    `<h1>Approve a change</h1>
<p>An assistant connected to your ${escapeHtml(params.appName)} account wants to:</p>
<p id="change-summary"><strong>${escapeHtml(change.summary)}</strong></p>
${who}
${changeTable(approval)}
<p class="muted">Tool: <code>${escapeHtml(approval.tool)}</code></p>
<p class="muted">It runs once, only with exactly these values, if you approve it. This request expires <time datetime="${expiresAt}">${timeLeftInWords(approval.expiresAt - params.now)}</time>.</p>
<form method="post" action="${escapeHtml(params.action)}" aria-label="Decide on this change">
<input type="hidden" name="csrf_token" value="${escapeHtml(params.csrfToken)}">
<div class="actions">
<button type="submit" name="decision" value="deny">Deny</button>
<button type="submit" name="decision" value="approve" class="primary">Approve</button>
</div>
</form>`,
  )
}

/** The record and the values the call writes: what the person approves. */
function changeTable(approval: Approval): string {
  const rows = fieldChanges(approval.tool, approval.record, approval.args.data)
  if (rows.length === 0) return ''
  const deleting = approval.tool === 'crud_delete'
  const updating = approval.tool === 'crud_update'
  const caption = deleting
    ? 'The record that will be deleted'
    : updating
      ? 'What will change'
      : 'The values of the new record'
  const head = updating
    ? '<tr><th scope="col">Field</th><th scope="col">Now</th><th scope="col">After</th></tr>'
    : '<tr><th scope="col">Field</th><th scope="col">Value</th></tr>'
  const cell = (value: string | undefined) =>
    `<td>${value === undefined ? '<span class="muted">(not shown)</span>' : `<code>${escapeHtml(value)}</code>`}</td>`
  const body = rows
    .map(
      (row) =>
        `<tr><th scope="row"><code>${escapeHtml(row.name)}</code></th>${
          deleting
            ? cell(row.before)
            : updating
              ? cell(row.before) + cell(row.after)
              : cell(row.after)
        }</tr>`,
    )
    .join('')
  return `<table id="change-fields"><caption>${caption}</caption><thead>${head}</thead><tbody>${body}</tbody></table>`
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
