import type { OAuthContext } from '../context.ts'
import { OAuthPageError } from '../errors.ts'
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
 * What an approval grants: the ticked permissions within the offer, and the scopes they need;
 * an unticked permission is not granted. The page always sends its choice marker with them: a
 * form without it was not answered on the page, and is refused (a 400, nothing granted) rather
 * than read as approving everything the client asked for.
 */
export function approvedGrant(
  ctx: OAuthContext,
  requested: string[],
  form: URLSearchParams,
): { scope: string[]; grant?: AccessGrant } {
  const access = ctx.describeAccess?.()
  if (!access) return { scope: requested }
  const offer = offeredAccess(access, requested)
  if (!form.has(GRANT_CHOICES_FIELD)) {
    throw new OAuthPageError(
      'invalid_request',
      'Invalid request',
      'The approval did not come from the consent page: nothing was granted. Approve on the page.',
    )
  }
  const grant = chosenGrant(offer, form.getAll(GRANT_FIELD))
  return { scope: scopesForGrant(access, requested, grant), grant }
}
