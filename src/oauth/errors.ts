import { KilnError, type KilnErrorCode } from '../core/errors.ts'
import { htmlResponse } from './http/page-response.ts'
import { renderErrorPage } from './pages/error-page.ts'

/**
 * Every error code the authorization server and the resource middleware answer with, as the
 * RFC strings. @see RFC 6749 §4.1.2.1, §5.2; RFC 6750 §3.1; RFC 7591 §3.2.2; RFC 8628 §3.5;
 * RFC 8707 §2.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'server_error'
  | 'temporarily_unavailable'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token'
  | 'invalid_target'
  | 'invalid_token'
  | 'insufficient_scope'

/**
 * A protocol error answered as JSON `{ error, error_description }` (token, registration,
 * device authorization) or as a `WWW-Authenticate` challenge (resource routes); its status
 * is its code's in the catalogue. `src/oauth/http/error-response.ts` installs the handler.
 */
export class OAuthError extends KilnError {
  override readonly code: OAuthErrorCode
  /** The scope a resource route needed (`insufficient_scope`). */
  readonly scope: string | undefined
  /** The auth scheme the client tried, echoed in `WWW-Authenticate` on a 401. @see RFC 6749 §5.2 */
  readonly challenge: string | undefined

  constructor(
    code: OAuthErrorCode,
    description: string,
    options?: { scope?: string; challenge?: string },
  ) {
    super(description)
    this.code = code
    this.scope = options?.scope
    this.challenge = options?.challenge
  }

  /** RFC 6749 §5.2: `{ error, error_description }`, never cached. */
  override body(): Record<string, unknown> {
    return { error: this.code, error_description: this.message }
  }

  /** A failed client authentication names the scheme the client tried. */
  override headers(): Record<string, string> {
    return {
      'Cache-Control': 'no-store',
      Pragma: 'no-cache',
      ...(this.challenge ? { 'WWW-Authenticate': `${this.challenge} realm="oauth"` } : {}),
    }
  }
}

/**
 * An `/authorize` error after the client and redirect URI are known good: the browser goes back
 * to the client with `error`, `error_description`, `state` and `iss`. @see RFC 6749 §4.1.2.1,
 * RFC 9207 §2
 */
export class OAuthRedirectError extends KilnError {
  override readonly code: OAuthErrorCode
  readonly redirectUri: string
  readonly state: string | undefined

  constructor(
    code: OAuthErrorCode,
    description: string,
    target: { redirectUri: string; state: string | undefined },
  ) {
    super(description)
    this.code = code
    this.redirectUri = target.redirectUri
    this.state = target.state
  }

  /** Always a redirect, whatever the code. */
  override get status(): number {
    return 302
  }

  /** The redirect back to the client. @see RFC 6749 §4.1.2.1, RFC 9207 */
  toRedirect(issuer: string): Response {
    const url = new URL(this.redirectUri)
    url.searchParams.set('error', this.code)
    url.searchParams.set('error_description', this.message)
    if (this.state !== undefined) url.searchParams.set('state', this.state)
    url.searchParams.set('iss', issuer)
    return new Response(null, {
      status: 302,
      headers: { Location: url.toString(), 'Cache-Control': 'no-store' },
    })
  }
}

/**
 * An error shown to the person in the browser as an HTML page, never a redirect: an unknown
 * client, a redirect URI that is not registered, a bad CSRF token, an expired request.
 */
export class OAuthPageError extends KilnError {
  override readonly code: KilnErrorCode
  readonly title: string

  /** The status is the code's: `invalid_request` 400, `forbidden` 403, `not_found` 404, … */
  constructor(code: KilnErrorCode, title: string, message: string) {
    super(message)
    this.code = code
    this.title = title
  }

  /** The page, with kiln's page security headers. */
  override toResponse(): Response {
    return htmlResponse(renderErrorPage({ title: this.title, message: this.message }), this.status)
  }
}
