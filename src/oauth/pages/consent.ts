import { displayName } from '../protocol/display-name.ts'
import { type AccessGrant, type GrantAction, grantChoice } from '../protocol/grant.ts'
import { describeScope } from '../protocol/scope.ts'
import { escapeHtml, layout } from './layout.ts'

export interface ConsentPageParams {
  appName: string
  clientName: string | undefined
  clientId: string
  /** Where the browser goes after approval (authorization code); absent for devices. */
  redirectHost: string | undefined
  scopes: string[]
  /** Plain words for each scope; a scope without one is shown as is. */
  scopeDescriptions: Readonly<Record<string, string>>
  /** For a client identified by its metadata-document URL: the host that serves it. */
  verifiedHost?: string | undefined
  /** Form action path. */
  action: string
  /** Hidden fields carried to the POST (request id or user code, CSRF token). */
  hidden: Record<string, string>
  /**
   * What the client will be able to do, per model (when the app describes its access): each
   * action a ticked checkbox the person can untick.
   */
  offer?: AccessGrant | undefined
}

/** The form field that says the page showed choices: then only ticked ones are granted. */
export const GRANT_CHOICES_FIELD = 'grant_choices'
/** The checkboxes' field: one `model:action` value per ticked permission. */
export const GRANT_FIELD = 'grant'

/** The Approve/Deny page shared by the authorization-code and device flows. */
export function renderConsentPage(params: ConsentPageParams): string {
  const name = displayName(params.clientName) ?? 'An unnamed application'
  const hidden = Object.entries(params.hidden)
    .map(
      ([field, value]) =>
        `<input type="hidden" name="${escapeHtml(field)}" value="${escapeHtml(value)}">`,
    )
    .join('\n')
  const scopes = params.scopes.map((scope) => scopeItem(scope, params.scopeDescriptions)).join('')
  const verified = params.verifiedHost
    ? `<p>Its identity is published at <strong id="verified-host">${escapeHtml(params.verifiedHost)}</strong> (verified).</p>`
    : ''
  const destination = params.redirectHost
    ? `<p>After you approve, you will be sent to <strong>${escapeHtml(params.redirectHost)}</strong>.</p>`
    : ''
  return layout(
    `Authorize ${name}`,
    `<h1>Authorize <span id="client-name">${escapeHtml(name)}</span></h1>
<p><strong>${escapeHtml(name)}</strong> wants to access your ${escapeHtml(params.appName)} account.</p>
<p class="muted">Client ID: <code>${escapeHtml(params.clientId)}</code></p>
${verified}
${destination}
<p>It asks for these permissions:</p>
<ul aria-label="Requested permissions">${scopes}</ul>
<p class="muted">The application names itself; approve only if you started this connection.</p>
<form method="post" action="${escapeHtml(params.action)}">
${hidden}
${params.offer ? grantChoices(params.offer) : ''}
<div class="actions">
<button type="submit" name="decision" value="deny">Deny</button>
<button type="submit" name="decision" value="approve" class="primary">Approve</button>
</div>
</form>`,
  )
}

const ACTION_WORDS: Record<GrantAction, string> = {
  read: 'read',
  create: 'create',
  update: 'change',
  delete: 'delete',
}

/**
 * One line per model with a ticked checkbox per action: unticking grants less than the
 * client asked for (read only, or some models only).
 */
function grantChoices(offer: AccessGrant): string {
  const models = Object.entries(offer)
  if (models.length === 0) {
    return `<p id="grant-none">It will not be able to reach any of your data.</p>
<input type="hidden" name="${GRANT_CHOICES_FIELD}" value="1">`
  }
  const rows = models
    .map(([model, actions]) => {
      const boxes = actions
        .map((action) => {
          const value = grantChoice(model, action)
          return `<label class="choice"><input type="checkbox" name="${GRANT_FIELD}" value="${escapeHtml(value)}" checked> ${ACTION_WORDS[action]}</label>`
        })
        .join(' ')
      return `<li><strong>${escapeHtml(model)}</strong>: ${boxes}</li>`
    })
    .join('')
  return `<p>What it will be able to do (untick what you do not want to allow):</p>
<ul aria-label="Granted access" id="grant">${rows}</ul>
<input type="hidden" name="${GRANT_CHOICES_FIELD}" value="1">`
}

/** Each granted model with its actions in words: "posts: read, create". */
export function accessItems(grant: AccessGrant): string {
  return Object.entries(grant)
    .map(
      ([model, actions]) =>
        `<li><strong>${escapeHtml(model)}</strong>: ${actions.map((action) => ACTION_WORDS[action]).join(', ')}</li>`,
    )
    .join('')
}

/** A permission in plain words, with the scope beside it for those who know them. */
export function scopeItem(scope: string, descriptions: Readonly<Record<string, string>>): string {
  const words = describeScope(scope, descriptions)
  return words
    ? `<li>${escapeHtml(words)} <code class="muted">${escapeHtml(scope)}</code></li>`
    : `<li><code>${escapeHtml(scope)}</code></li>`
}

/** What the consent page shows as the destination of a redirect URI. */
export function redirectHost(uri: string): string {
  try {
    const url = new URL(uri)
    return url.host !== '' ? url.host : url.protocol
  } catch {
    return uri
  }
}
