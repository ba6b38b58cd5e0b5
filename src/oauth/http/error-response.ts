import type { Context, ErrorHandler } from 'hono'
import { UnauthenticatedError } from '../../core/errors.ts'
import { errorHandler } from '../../core/http-errors.ts'
import type { Logger } from '../../core/logger.ts'
import { OAuthError, OAuthPageError, OAuthRedirectError } from '../errors.ts'

/** Quotes a value for an auth-param of `WWW-Authenticate`. @see RFC 9110 §5.6.4 */
export function quoteHeaderValue(value: string): string {
  return `"${value.replace(/[\\"]/g, '\\$&').replace(/[\r\n]/g, ' ')}"`
}

/**
 * The `WWW-Authenticate` challenge of a resource route: no `error` when the token is missing,
 * `invalid_token` or `insufficient_scope` otherwise. @see RFC 6750 §3, RFC 9728 §5.1
 */
export function bearerChallenge(params: {
  resourceMetadataUrl: string
  error?: OAuthError
  scope?: string
}): string {
  const parts = [`resource_metadata=${quoteHeaderValue(params.resourceMetadataUrl)}`]
  if (params.error) {
    parts.push(`error=${quoteHeaderValue(params.error.code)}`)
    parts.push(`error_description=${quoteHeaderValue(params.error.message)}`)
  }
  const scope = params.error?.scope ?? params.scope
  if (scope) parts.push(`scope=${quoteHeaderValue(scope)}`)
  return `Bearer ${parts.join(', ')}`
}

/** The 401 of a resource route when no bearer token came. */
export function missingTokenResponse(resourceMetadataUrl: string, scope?: string): Response {
  return new UnauthenticatedError().toResponse({
    'WWW-Authenticate': bearerChallenge({ resourceMetadataUrl, ...(scope ? { scope } : {}) }),
  })
}

/**
 * The 401 or 403 of a resource route for an invalid token or a missing scope; `scope` is
 * named unless the error carries its own.
 */
export function bearerErrorResponse(
  error: OAuthError,
  resourceMetadataUrl: string,
  scope?: string,
): Response {
  return error.toResponse({
    'WWW-Authenticate': bearerChallenge({
      resourceMetadataUrl,
      error,
      ...(scope ? { scope } : {}),
    }),
  })
}

/**
 * The one table from the authorization server's errors to responses: protocol errors as
 * RFC JSON, `/authorize` errors as redirects back to the client, browser errors as an HTML
 * page; anything else goes to kiln's shared error handler.
 */
export function oauthErrorHandler(options: { issuer: string; logger: Logger }): ErrorHandler {
  const fallback = errorHandler({ logger: options.logger })
  return function oauthErrors(err: Error, c: Context) {
    if (err instanceof OAuthRedirectError) return err.toRedirect(options.issuer)
    if (err instanceof OAuthPageError) return err.toResponse()
    if (err instanceof OAuthError) {
      if (err.status >= 500) options.logger.error({ code: err.code }, err.message)
      return err.toResponse()
    }
    return fallback(err, c)
  }
}
