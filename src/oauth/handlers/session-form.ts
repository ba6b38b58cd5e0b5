import type { Context } from 'hono'
import { constantTimeEqual } from '../../core/http/constant-time.ts'
import type { OAuthSession } from '../context.ts'
import { OAuthError, OAuthPageError } from '../errors.ts'
import { readForm } from '../http/params.ts'

/**
 * Reads a consent or device form and checks its `csrf_token` against the session's, in
 * constant time. Failures are pages for the person, not JSON.
 */
export async function readSessionForm(c: Context, session: OAuthSession): Promise<URLSearchParams> {
  let form: URLSearchParams
  try {
    form = await readForm(c)
  } catch (error) {
    if (error instanceof OAuthError)
      throw new OAuthPageError('invalid_request', 'Invalid request', error.message)
    throw error
  }
  if (!constantTimeEqual(form.get('csrf_token') ?? '', session.csrfToken)) {
    throw new OAuthPageError(
      'forbidden',
      'Request refused',
      'The form has expired or did not come from this site. Go back and try again.',
    )
  }
  return form
}
