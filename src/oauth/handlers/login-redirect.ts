import type { OAuthContext } from '../context.ts'
import { redirectResponse } from '../http/page-response.ts'

/** Sends the browser to the application's login page with a relative `return_to`. */
export function loginRedirect(
  ctx: OAuthContext,
  returnTo: string,
  status: 302 | 303 = 302,
): Response {
  const separator = ctx.loginPath.includes('?') ? '&' : '?'
  return redirectResponse(
    `${ctx.loginPath}${separator}return_to=${encodeURIComponent(returnTo)}`,
    status,
  )
}
