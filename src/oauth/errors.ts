import { KilnError } from '../core/errors.ts'

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

const STATUS: Partial<Record<OAuthErrorCode, number>> = {
  invalid_client: 401,
  invalid_token: 401,
  insufficient_scope: 403,
  server_error: 500,
  temporarily_unavailable: 503,
}

/**
 * A protocol error answered as JSON `{ error, error_description }` (token, registration,
 * device authorization) or as a `WWW-Authenticate` challenge (resource routes).
 * `src/oauth/http/error-response.ts` is the one place these become responses.
 */
export class OAuthError extends KilnError {
  override readonly code: OAuthErrorCode
  override readonly status: number
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
    this.status = STATUS[code] ?? 400
    this.scope = options?.scope
    this.challenge = options?.challenge
  }
}

/**
 * An `/authorize` error after the client and redirect URI are known good: the browser goes back
 * to the client with `error`, `error_description`, `state` and `iss`. @see RFC 6749 §4.1.2.1,
 * RFC 9207 §2
 */
export class OAuthRedirectError extends KilnError {
  override readonly code: OAuthErrorCode
  override readonly status = 302
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
}

/**
 * An error shown to the person in the browser as an HTML page, never a redirect: an unknown
 * client, a redirect URI that is not registered, a bad CSRF token, an expired request.
 */
export class OAuthPageError extends KilnError {
  override readonly code: string
  override readonly status: number
  readonly title: string

  constructor(status: number, title: string, message: string, code = 'invalid_request') {
    super(message)
    this.status = status
    this.title = title
    this.code = code
  }
}
