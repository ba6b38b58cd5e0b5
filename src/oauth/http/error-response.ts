import type { Context, ErrorHandler } from 'hono'
import { errorHandler } from '../../core/http-errors.ts'
import type { Logger } from '../../core/logger.ts'
import { OAuthError, OAuthPageError, OAuthRedirectError } from '../errors.ts'
import { renderErrorPage } from '../pages/error-page.ts'
import { htmlResponse } from './page-response.ts'

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

/** JSON `{ error, error_description }` with `Cache-Control: no-store`. @see RFC 6749 §5.2 */
export function oauthJsonError(error: OAuthError, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error: error.code, error_description: error.message }), {
    status: error.status,
    headers: {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-store',
      Pragma: 'no-cache',
      ...headers,
    },
  })
}

/** The redirect back to the client for an `/authorize` error. @see RFC 6749 §4.1.2.1, RFC 9207 */
export function authorizeErrorRedirect(error: OAuthRedirectError, issuer: string): Response {
  const url = new URL(error.redirectUri)
  url.searchParams.set('error', error.code)
  url.searchParams.set('error_description', error.message)
  if (error.state !== undefined) url.searchParams.set('state', error.state)
  url.searchParams.set('iss', issuer)
  return new Response(null, {
    status: 302,
    headers: { Location: url.toString(), 'Cache-Control': 'no-store' },
  })
}

/** The 401 of a resource route when no bearer token came. */
export function missingTokenResponse(resourceMetadataUrl: string, scope?: string): Response {
  return new Response(JSON.stringify({ error: 'Unauthenticated' }), {
    status: 401,
    headers: {
      'Content-Type': 'application/json',
      'WWW-Authenticate': bearerChallenge({
        resourceMetadataUrl,
        ...(scope ? { scope } : {}),
      }),
    },
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
  return oauthJsonError(error, {
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
    if (err instanceof OAuthRedirectError) return authorizeErrorRedirect(err, options.issuer)
    if (err instanceof OAuthPageError) {
      return htmlResponse(renderErrorPage({ title: err.title, message: err.message }), err.status)
    }
    if (err instanceof OAuthError) {
      if (err.status >= 500) options.logger.error({ code: err.code }, err.message)
      return oauthJsonError(
        err,
        err.challenge ? { 'WWW-Authenticate': `${err.challenge} realm="oauth"` } : {},
      )
    }
    return fallback(err, c)
  }
}
