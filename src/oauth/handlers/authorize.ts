import type { Handler } from 'hono'
import { constantTimeEqual } from '../../core/http/constant-time.ts'
import type { LimitRequest } from '../../core/http/rate-limiters.ts'
import { limitRequest } from '../../core/http/throttle.ts'
import type { OAuthContext } from '../context.ts'
import { OAuthPageError, OAuthRedirectError } from '../errors.ts'
import { htmlResponse, redirectResponse } from '../http/page-response.ts'
import { redirectHost, renderConsentPage } from '../pages/consent.ts'
import type { RegisteredClient } from '../protocol/client-metadata.ts'
import { isS256Challenge } from '../protocol/pkce.ts'
import { sha256Hex } from '../protocol/random.ts'
import { matchesRedirectUri } from '../protocol/redirect-uri.ts'
import { resolveResource } from '../protocol/resource.ts'
import { grantScopes } from '../protocol/scope.ts'
import { resolveClient } from '../resolve-client.ts'
import { REFRESH_TTL_MS } from '../store/token-families.ts'
import { approvedGrant, consentOffer } from './grant-form.ts'
import { loginRedirect } from './login-redirect.ts'
import { readSessionForm } from './session-form.ts'

/**
 * GET /authorize: checks the client and redirect URI first (an error page, never a redirect,
 * when either is wrong), then the rest of the request (errors go back to the client with
 * `state` and `iss`), then sends unauthenticated people to the login page, then shows the
 * consent page. @see RFC 6749 §4.1.1, §4.1.2.1; RFC 7636 §4.3; RFC 8707 §2; RFC 9207
 */
export function authorizeHandler(ctx: OAuthContext): Handler {
  const action = new URL(ctx.endpoints.authorization).pathname
  return async function authorize(c) {
    const url = new URL(c.req.url)
    const query = url.searchParams
    const { client, redirectUri, redirectUriSent } = await checkClient(
      ctx,
      query,
      limitRequest(c, ctx.limiters),
    )
    const state = query.getAll('state')[0]
    const fail = (code: ConstructorParameters<typeof OAuthRedirectError>[0], description: string) =>
      new OAuthRedirectError(code, description, { redirectUri, state })
    for (const name of [
      'response_type',
      'code_challenge',
      'code_challenge_method',
      'scope',
      'state',
    ]) {
      if (query.getAll(name).length > 1)
        throw fail('invalid_request', `${name} must not be repeated`)
    }
    const responseType = query.get('response_type')
    if (!responseType) throw fail('invalid_request', 'response_type is required')
    if (responseType !== 'code') {
      throw fail('unsupported_response_type', 'Only response_type=code is supported')
    }
    if (!client.grantTypes.includes('authorization_code')) {
      throw fail('unauthorized_client', 'This client is not registered for authorization_code')
    }
    const challenge = query.get('code_challenge')
    const method = query.get('code_challenge_method')
    if (!challenge) throw fail('invalid_request', 'code_challenge is required (PKCE)')
    if (!method) throw fail('invalid_request', 'code_challenge_method is required (S256)')
    if (method !== 'S256')
      throw fail('invalid_request', 'Only code_challenge_method=S256 is supported')
    if (!isS256Challenge(challenge)) throw fail('invalid_request', 'code_challenge is malformed')
    const resource = resolveResource(query.getAll('resource'), ctx.endpoints.resource)
    if (!resource)
      throw fail('invalid_target', `The only resource here is ${ctx.endpoints.resource}`)
    const scope = grantScopes(query.get('scope') ?? undefined, ctx.scopes)

    const session = await ctx.session(c.req.raw)
    if (!session) return loginRedirect(ctx, url.pathname + url.search)

    const { scopes, offer } = consentOffer(ctx, scope)
    const requestId = await ctx.codes.savePending({
      clientId: client.clientId,
      redirectUri,
      redirectUriSent,
      codeChallenge: challenge,
      state,
      scope,
      resource,
      userId: session.userId,
      tenantId: session.tenantId,
      csrfHash: sha256Hex(session.csrfToken),
    })
    return htmlResponse(
      renderConsentPage({
        appName: ctx.appName,
        clientName: client.clientName,
        clientId: client.clientId,
        redirectHost: redirectHost(redirectUri),
        scopes,
        scopeDescriptions: ctx.scopeDescriptions,
        verifiedHost: client.verifiedHost,
        action,
        offer,
        hidden: { request_id: requestId, csrf_token: session.csrfToken },
      }),
    )
  }
}

/**
 * POST /authorize: the consent decision. The session's CSRF token is compared in constant
 * time with the form's and re-checked against the stored request, which must belong to the
 * same user and tenant. Answers 303 to the redirect URI with `code` (or `error`), `state`
 * and `iss`.
 */
export function authorizeDecisionHandler(ctx: OAuthContext): Handler {
  return async function authorizeDecision(c) {
    const session = await ctx.session(c.req.raw)
    if (!session) {
      throw new OAuthPageError(
        'unauthenticated',
        'Signed out',
        'Your session has ended. Sign in and start again from the application.',
      )
    }
    const form = await readSessionForm(c, session)
    const decision = form.get('decision')
    if (decision !== 'approve' && decision !== 'deny') {
      throw new OAuthPageError('invalid_request', 'Invalid request', 'Choose Approve or Deny.')
    }
    const requestId = form.get('request_id') ?? ''
    const expired = new OAuthPageError(
      'invalid_request',
      'Request expired',
      'This authorization request has expired or was already answered. Start again from the application.',
    )
    // Ownership is checked on a read, before the record is consumed: another session must not
    // be able to burn someone's pending consent.
    const shown = await ctx.codes.peekPending(requestId)
    if (!shown) throw expired
    if (
      shown.userId !== session.userId ||
      shown.tenantId !== session.tenantId ||
      !constantTimeEqual(shown.csrfHash, sha256Hex(session.csrfToken))
    ) {
      throw new OAuthPageError(
        'forbidden',
        'Request refused',
        'This authorization request belongs to another session.',
      )
    }
    // Read before the request is taken: a refused form leaves it for the page to answer.
    const approved = decision === 'deny' ? undefined : approvedGrant(ctx, shown.scope, form)
    const pending = await ctx.codes.takePending(requestId)
    if (!pending) throw expired
    const target = new URL(pending.redirectUri)
    if (!approved) {
      target.searchParams.set('error', 'access_denied')
      target.searchParams.set('error_description', 'The user denied the request')
    } else {
      const code = await ctx.codes.issueCode(
        {
          clientId: pending.clientId,
          redirectUri: pending.redirectUri,
          redirectUriSent: pending.redirectUriSent,
          codeChallenge: pending.codeChallenge,
          ...approved,
          resource: pending.resource,
          userId: session.userId,
          tenantId: session.tenantId,
          approvedAt: ctx.clock.now(),
          credentialStamp: await ctx.stampOf(session.userId),
          familyId: ctx.families.newFamilyId(),
        },
        REFRESH_TTL_MS,
      )
      target.searchParams.set('code', code)
    }
    if (pending.state !== undefined) target.searchParams.set('state', pending.state)
    target.searchParams.set('iss', ctx.endpoints.issuer)
    return redirectResponse(target.toString(), 303)
  }
}

async function checkClient(
  ctx: OAuthContext,
  query: URLSearchParams,
  requester: LimitRequest,
): Promise<{ client: RegisteredClient; redirectUri: string; redirectUriSent: boolean }> {
  const clientIds = query.getAll('client_id')
  if (clientIds.length !== 1 || !clientIds[0]) {
    throw new OAuthPageError(
      'unknown_client',
      'Unknown application',
      'The request does not name exactly one client_id.',
    )
  }
  const client = await resolveClient(ctx, clientIds[0], requester)
  if (!client) {
    throw new OAuthPageError(
      'unknown_client',
      'Unknown application',
      'This application is not registered here.',
    )
  }
  const redirectUris = query.getAll('redirect_uri')
  if (redirectUris.length > 1) {
    throw new OAuthPageError(
      'invalid_redirect_uri',
      'Invalid redirect',
      'The request names more than one redirect_uri.',
    )
  }
  const requested = redirectUris[0] || undefined
  if (requested === undefined) {
    const only = client.redirectUris.length === 1 ? client.redirectUris[0] : undefined
    if (!only)
      throw new OAuthPageError(
        'invalid_redirect_uri',
        'Invalid redirect',
        'The request needs a redirect_uri.',
      )
    return { client, redirectUri: only, redirectUriSent: false }
  }
  if (!matchesRedirectUri(requested, client.redirectUris)) {
    throw new OAuthPageError(
      'invalid_redirect_uri',
      'Invalid redirect',
      'This redirect URI is not registered for the application.',
    )
  }
  return { client, redirectUri: requested, redirectUriSent: true }
}
