import type { ConnectedApp } from '../grants.ts'
import { accessItems, scopeItem } from './consent.ts'
import { escapeHtml, layout } from './layout.ts'

/** The signed-in person's connected applications, each with a Disconnect button. */
export function renderConnectedAppsPage(params: {
  appName: string
  apps: ConnectedApp[]
  action: string
  csrfToken: string
  scopeDescriptions: Readonly<Record<string, string>>
  /** Shown once after a disconnect. */
  notice?: string
}): string {
  const notice = params.notice
    ? `<p role="status" class="muted">${escapeHtml(params.notice)}</p>`
    : ''
  const list =
    params.apps.length === 0
      ? '<p>No applications are connected to your account.</p>'
      : `<ul class="apps" aria-label="Connected applications">${params.apps.map((app) => appItem(app, params)).join('')}</ul>`
  return layout(
    'Connected applications',
    `<h1>Connected applications</h1>
<p>These applications can use your ${escapeHtml(params.appName)} account. Disconnect any you no longer use or do not recognise.</p>
${notice}
${list}`,
  )
}

function appItem(
  app: ConnectedApp,
  params: {
    action: string
    csrfToken: string
    scopeDescriptions: Readonly<Record<string, string>>
  },
): string {
  const name = app.clientName ?? 'An unnamed application'
  const host = app.verifiedHost
    ? ` <span class="muted">(${escapeHtml(app.verifiedHost)}, verified)</span>`
    : ''
  const scopes = app.scopes.map((scope) => scopeItem(scope, params.scopeDescriptions)).join('')
  return `<li>
<h2>${escapeHtml(name)}${host}</h2>
<p class="muted">Connected ${escapeHtml(app.firstAuthorizedAt.toISOString().slice(0, 10))}; last used ${escapeHtml(app.lastUsedAt.toISOString().slice(0, 10))}</p>
<ul aria-label="Permissions">${scopes}</ul>
${app.access ? `<ul aria-label="Granted access">${accessItems(app.access)}</ul>` : ''}
<form method="post" action="${escapeHtml(params.action)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(params.csrfToken)}">
<input type="hidden" name="client_id" value="${escapeHtml(app.clientId)}">
<button type="submit">Disconnect ${escapeHtml(name)}</button>
</form>
</li>`
}
