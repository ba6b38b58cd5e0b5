import type { OAuthContext } from '../context.ts'
import { GRANT_CHOICES_FIELD, GRANT_FIELD } from '../pages/consent.ts'
import { type AccessGrant, chosenGrant, offeredAccess, scopesForGrant } from '../protocol/grant.ts'

/**
 * What the consent page shows for the requested scopes: with the app's `describeAccess`, the
 * models and actions on offer, and only the scopes some offered action needs (no write scope
 * when nothing can be written); without it, the scopes as requested.
 */
export function consentOffer(
  ctx: OAuthContext,
  requested: string[],
): { scopes: string[]; offer: AccessGrant | undefined } {
  const access = ctx.describeAccess?.()
  if (!access) return { scopes: requested, offer: undefined }
  const offer = offeredAccess(access, requested)
  return { scopes: scopesForGrant(access, requested, offer), offer }
}

/**
 * What an approval grants: the ticked permissions within the offer, and the scopes they need.
 * A form without the page's choices (answered by a script, not the page) approves the offer as
 * shown; with them, an unticked permission is not granted.
 */
export function approvedGrant(
  ctx: OAuthContext,
  requested: string[],
  form: URLSearchParams,
): { scope: string[]; grant?: AccessGrant } {
  const access = ctx.describeAccess?.()
  if (!access) return { scope: requested }
  const offer = offeredAccess(access, requested)
  const grant = form.has(GRANT_CHOICES_FIELD) ? chosenGrant(offer, form.getAll(GRANT_FIELD)) : offer
  return { scope: scopesForGrant(access, requested, grant), grant }
}
