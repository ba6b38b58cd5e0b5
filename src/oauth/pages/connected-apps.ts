import type { AuditOutcome, AuditRecord } from '../../db/audit/audit-log.ts'
import type { ConnectedApp } from '../grants.ts'
import { accessItems, scopeItem } from './consent.ts'
import { escapeHtml, layout } from './layout.ts'

/** One application's audit entries on this page. */
export interface AppActivity {
  clientId: string
  /** Newest first. */
  entries: AuditRecord[]
  page: number
  hasOlder: boolean
  /** The newest call, when on the first page. */
  lastCallAt: Date | undefined
}

interface PageParams {
  appName: string
  apps: ConnectedApp[]
  action: string
  csrfToken: string
  scopeDescriptions: Readonly<Record<string, string>>
  /** Per application, what it did; without an audit trail the section is left out. */
  activity?: AppActivity[]
  /** Shown once after a revocation. */
  notice?: string
}

/** The signed-in person's connected applications, each with its activity and a Revoke button. */
export function renderConnectedAppsPage(params: PageParams): string {
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
<p>These applications can use your ${escapeHtml(params.appName)} account. Revoke any you no longer use or do not recognise.</p>
${notice}
${list}`,
  )
}

function appItem(app: ConnectedApp, params: PageParams): string {
  const name = app.clientName ?? 'An unnamed application'
  const host = app.verifiedHost
    ? ` <span class="muted">(${escapeHtml(app.verifiedHost)}, verified)</span>`
    : ''
  const scopes = app.scopes.map((scope) => scopeItem(scope, params.scopeDescriptions)).join('')
  const activity = params.activity?.find((item) => item.clientId === app.clientId)
  const lastUsed =
    activity?.lastCallAt && activity.lastCallAt > app.lastUsedAt
      ? activity.lastCallAt
      : app.lastUsedAt
  return `<li data-client-id="${escapeHtml(app.clientId)}">
<h2>${escapeHtml(name)}${host}</h2>
<p class="muted">Connected ${escapeHtml(day(app.firstAuthorizedAt))}; last used ${escapeHtml(time(lastUsed))}</p>
<ul aria-label="Permissions">${scopes}</ul>
${app.access ? `<ul aria-label="Granted access">${accessItems(app.access)}</ul>` : ''}
${activity ? activitySection(name, activity, params.action) : ''}
<form method="post" action="${escapeHtml(params.action)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(params.csrfToken)}">
<input type="hidden" name="client_id" value="${escapeHtml(app.clientId)}">
<button type="submit">Revoke ${escapeHtml(name)}</button>
</form>
</li>`
}

/** Every outcome the audit trail records, in words: a new outcome must be given its words. */
const OUTCOME_WORDS: Record<AuditOutcome, string> = {
  ok: 'done',
  refused: 'refused',
  error: 'failed',
  awaiting_approval: 'awaiting approval',
  approved: 'approved by you',
  client_confirmed: 'confirmed in the assistant',
  denied: 'denied by you',
  expired: 'expired unanswered',
  cancelled: 'cancelled',
}

const TOOL_WORDS: Record<string, string> = {
  crud_list: 'listed',
  crud_create: 'created',
  crud_update: 'updated',
  crud_delete: 'deleted',
}

function activitySection(name: string, activity: AppActivity, action: string): string {
  const label = `Activity of ${name}`
  if (activity.entries.length === 0 && activity.page === 1) {
    return `<section aria-label="${escapeHtml(label)}"><h3>Activity</h3><p class="muted">Nothing yet.</p></section>`
  }
  const rows = activity.entries.map(activityRow).join('')
  const link = (page: number, text: string, rel: string) =>
    `<a rel="${rel}" href="${escapeHtml(`${action}?${new URLSearchParams({ app: activity.clientId, page: String(page) })}`)}">${text}</a>`
  const nav = [
    activity.page > 1 ? link(activity.page - 1, 'Newer activity', 'prev') : '',
    activity.hasOlder ? link(activity.page + 1, 'Older activity', 'next') : '',
  ]
    .filter(Boolean)
    .join(' ')
  return `<section aria-label="${escapeHtml(label)}">
<h3>Activity${activity.page > 1 ? ` (page ${activity.page})` : ''}</h3>
<table class="activity">
<thead><tr><th scope="col">When (UTC)</th><th scope="col">What</th><th scope="col">Outcome</th></tr></thead>
<tbody>${rows}</tbody>
</table>
${nav ? `<p class="muted">${nav}</p>` : ''}
</section>`
}

function activityRow(entry: AuditRecord): string {
  const verb = TOOL_WORDS[entry.tool] ?? entry.tool
  const ids = entry.recordIds.length > 0 ? ` #${entry.recordIds.slice(0, 5).join(', #')}` : ''
  const more = entry.recordIds.length > 5 ? ` and ${entry.recordIds.length - 5} more` : ''
  const fields = entry.fields.length > 0 ? ` (${entry.fields.join(', ')})` : ''
  const outcome = OUTCOME_WORDS[entry.outcome] ?? entry.outcome
  const why = entry.message ? `<span class="muted">: ${escapeHtml(entry.message)}</span>` : ''
  return `<tr data-outcome="${escapeHtml(entry.outcome)}"><td class="when">${escapeHtml(minute(entry.at))}</td><td>${escapeHtml(`${verb} ${entry.model}${ids}${more}${fields}`)}</td><td>${escapeHtml(outcome)}${why}</td></tr>`
}

function day(date: Date): string {
  return date.toISOString().slice(0, 10)
}

/** UTC, to the minute. */
function minute(date: Date): string {
  return date.toISOString().slice(0, 16).replace('T', ' ')
}

function time(date: Date): string {
  return `${minute(date)} UTC`
}
