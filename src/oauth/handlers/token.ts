import type { Context, Handler } from 'hono'
import { assertAllowed, limitRequest } from '../../core/http/throttle.ts'
import type { OAuthContext } from '../context.ts'
import { OAuthError } from '../errors.ts'
import { readForm, required, resources, single } from '../http/params.ts'
import type { TokenResponse } from '../issuer.ts'
import type { RegisteredClient } from '../protocol/client-metadata.ts'
import { decidePoll } from '../protocol/device-poll.ts'
import { DEVICE_CODE_GRANT } from '../protocol/metadata.ts'
import { verifyCodeVerifier } from '../protocol/pkce.ts'
import { resolveResource } from '../protocol/resource.ts'
import { isScopeSubset, parseScope } from '../protocol/scope.ts'
import { noteClientUsed } from '../store/client-expiry.ts'
import { DEVICE_INTERVAL_SECONDS } from '../store/device-grants.ts'
import { authenticateClient } from './client-auth.ts'

/**
 * POST /token: authorization code (+ PKCE), device code polling and refresh, all minted by
 * the one issuer. Public clients only: `client_id` identifies, PKCE or the device code
 * proves. @see RFC 6749 §3.2, §4.1.3, §6; RFC 7636 §4.5; RFC 8628 §3.4
 */
export function tokenHandler(ctx: OAuthContext): Handler {
  return async function token(c) {
    const form = await readForm(c)
    const grantType = required(form, 'grant_type')
    const client = await authenticateClient(ctx, c, form)
    let response: TokenResponse
    switch (grantType) {
      case 'authorization_code':
        response = await exchangeCode(ctx, client, form)
        break
      case DEVICE_CODE_GRANT:
        response = await pollDevice(ctx, c, client, form)
        break
      case 'refresh_token':
        response = await refresh(ctx, client, form)
        break
      default:
        throw new OAuthError('unsupported_grant_type', `Unsupported grant_type: ${grantType}`)
    }
    await noteClientUsed(ctx, client)
    return c.json(response, 200, { 'Cache-Control': 'no-store', Pragma: 'no-cache' })
  }
}

function checkGrantType(client: RegisteredClient, grantType: string): void {
  if (!client.grantTypes.includes(grantType)) {
    throw new OAuthError('unauthorized_client', `This client is not registered for ${grantType}`)
  }
}

/** A `resource` at the token endpoint may repeat the grant's, never widen it. @see RFC 8707 §2.2 */
function checkResource(ctx: OAuthContext, form: URLSearchParams, bound: string): void {
  const values = resources(form)
  if (values.length === 0) return
  if (resolveResource(values, ctx.endpoints.resource) !== bound) {
    throw new OAuthError('invalid_target', 'The resource differs from the one authorized')
  }
}

async function exchangeCode(
  ctx: OAuthContext,
  client: RegisteredClient,
  form: URLSearchParams,
): Promise<TokenResponse> {
  checkGrantType(client, 'authorization_code')
  const code = required(form, 'code')
  const verifier = required(form, 'code_verifier')
  const redirectUri = single(form, 'redirect_uri')
  const record = await ctx.codes.peekCode(code)
  if (!record) throw await replayOrUnknown(ctx, code)
  if (record.clientId !== client.clientId) {
    throw new OAuthError('invalid_grant', 'The code was issued to another client')
  }
  // Required only when the authorization request carried it; when sent anyway it must match.
  if (record.redirectUriSent && redirectUri === undefined) {
    throw new OAuthError('invalid_request', 'redirect_uri is required')
  }
  if (redirectUri !== undefined && record.redirectUri !== redirectUri) {
    throw new OAuthError('invalid_grant', 'redirect_uri differs from the authorization request')
  }
  if (!verifyCodeVerifier(verifier, record.codeChallenge)) {
    throw new OAuthError('invalid_grant', 'The code_verifier does not match the code_challenge')
  }
  checkResource(ctx, form, record.resource)
  const consumed = await ctx.codes.consumeCode(code)
  if (!consumed) throw await replayOrUnknown(ctx, code)
  const {
    redirectUri: _r,
    redirectUriSent: _s,
    codeChallenge: _c,
    expiresAt: _e,
    familyId,
    ...binding
  } = consumed
  return ctx.issuer.issue(binding, {
    familyId,
    refresh: client.grantTypes.includes('refresh_token'),
    grant: 'authorization_code',
    client: shownClient(client),
  })
}

function shownClient(client: RegisteredClient) {
  return { name: client.clientName, verifiedHost: client.verifiedHost }
}

/** A used code presented again revokes every token issued from it. @see RFC 6749 §4.1.2 */
async function replayOrUnknown(ctx: OAuthContext, code: string): Promise<OAuthError> {
  const familyId = await ctx.codes.familyOf(code)
  if (familyId) {
    // The code was issued here and is gone: used (perhaps this very moment) or expired.
    // Either way its family ends; an expired code never started one.
    await ctx.families.revoke(familyId)
    ctx.logger.warn({ familyId }, 'oauth: authorization code replayed; its tokens are revoked')
    return new OAuthError(
      'invalid_grant',
      'The code was already used or has expired; tokens issued from it are revoked',
    )
  }
  return new OAuthError('invalid_grant', 'The code is unknown or expired')
}

/** Polls with device codes that do not exist are guesses: limited per client address. */
async function countUnknownDeviceCode(ctx: OAuthContext, c: Context): Promise<void> {
  assertAllowed(
    await ctx.limiters.consume('oauth-device-code-unknown', limitRequest(c, ctx.limiters)),
  )
}

async function pollDevice(
  ctx: OAuthContext,
  c: Context,
  client: RegisteredClient,
  form: URLSearchParams,
): Promise<TokenResponse> {
  const deviceCode = required(form, 'device_code')
  const found = await ctx.devices.get(deviceCode)
  const [decision, poll] = found
    ? await Promise.all([ctx.devices.decision(found.hash), ctx.devices.pollState(found.hash)])
    : [undefined, undefined]
  const outcome = decidePoll({
    grant: found?.grant,
    decision,
    poll,
    clientId: client.clientId,
    now: ctx.clock.now(),
    initialInterval: DEVICE_INTERVAL_SECONDS,
  })
  switch (outcome.kind) {
    case 'expired':
      if (!found) await countUnknownDeviceCode(ctx, c)
      throw new OAuthError(
        'expired_token',
        'The device code is unknown or has expired; start again',
      )
    case 'wrong_client':
      throw new OAuthError('invalid_grant', 'The device code was issued to another client')
    case 'slow_down':
      await ctx.devices.savePollState(found!.hash, outcome.poll)
      throw new OAuthError('slow_down', `Poll at most every ${outcome.poll.interval} seconds`)
    case 'pending':
      await ctx.devices.savePollState(found!.hash, outcome.poll)
      throw new OAuthError('authorization_pending', 'The user has not approved the request yet')
    case 'denied':
      await ctx.devices.savePollState(found!.hash, outcome.poll)
      throw new OAuthError('access_denied', 'The user denied the request')
    case 'approved': {
      const { hash, grant } = found!
      checkResource(ctx, form, grant.resource)
      if (!(await ctx.devices.consume(hash, grant))) {
        throw new OAuthError('expired_token', 'The device code was already used; start again')
      }
      return ctx.issuer.issue(
        {
          clientId: grant.clientId,
          scope: outcome.scope,
          resource: grant.resource,
          userId: outcome.userId,
          tenantId: outcome.tenantId,
          approvedAt: outcome.approvedAt,
          credentialStamp: outcome.credentialStamp,
          ...(outcome.grant !== undefined ? { grant: outcome.grant } : {}),
        },
        {
          familyId: ctx.families.newFamilyId(),
          refresh: client.grantTypes.includes('refresh_token'),
          grant: 'device_code',
          client: shownClient(client),
        },
      )
    }
  }
}

/**
 * Refresh with rotation: each refresh token works once; presenting a rotated one revokes the
 * whole family. Another client, a wider scope or another resource is refused.
 * @see RFC 6749 §6, RFC 9700 §4.14.2
 */
async function refresh(
  ctx: OAuthContext,
  client: RegisteredClient,
  form: URLSearchParams,
): Promise<TokenResponse> {
  checkGrantType(client, 'refresh_token')
  const token = required(form, 'refresh_token')
  const record = await ctx.families.getRefreshToken(token)
  if (!record) throw new OAuthError('invalid_grant', 'The refresh token is unknown or expired')
  if (record.clientId !== client.clientId) {
    throw new OAuthError('invalid_grant', 'The refresh token was issued to another client')
  }
  if (await ctx.families.isRevoked(record.familyId)) {
    throw new OAuthError('invalid_grant', 'The refresh token has been revoked')
  }
  if (await ctx.families.wasRotated(token)) {
    await revokeReused(ctx, record.familyId)
  }
  const requested = parseScope(single(form, 'scope'))
  if (!isScopeSubset(requested, record.scope)) {
    throw new OAuthError('invalid_scope', 'A refresh cannot widen the scope')
  }
  checkResource(ctx, form, record.resource)
  if (!(await ctx.families.markRotated(token))) await revokeReused(ctx, record.familyId)
  const { familyId, expiresAt: _e, ...binding } = record
  return ctx.issuer.issue(binding, {
    familyId,
    refresh: true,
    grant: 'refresh_token',
    ...(requested.length > 0 ? { accessScope: requested } : {}),
  })
}

async function revokeReused(ctx: OAuthContext, familyId: string): Promise<never> {
  await ctx.families.revoke(familyId)
  ctx.logger.warn({ familyId }, 'oauth: rotated refresh token reused; its family is revoked')
  throw new OAuthError('invalid_grant', 'The refresh token was already used; the grant is revoked')
}
