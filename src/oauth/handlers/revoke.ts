import type { Handler } from 'hono'
import type { OAuthContext } from '../context.ts'
import { OAuthError } from '../errors.ts'
import { readForm, required, single } from '../http/params.ts'
import { verifyAccessToken } from '../protocol/access-token.ts'
import { authenticateClient } from './client-auth.ts'

/**
 * POST /revoke: token revocation. A refresh token or an access token ends its whole grant
 * (every token of the family), as RFC 7009 §2.1 allows. Unknown, expired and already
 * revoked tokens answer 200 too, so the endpoint tells nothing about tokens it does not
 * hold. A token of another client is refused. @see RFC 7009 §2
 */
export function revokeHandler(ctx: OAuthContext): Handler {
  return async function revoke(c) {
    const form = await readForm(c)
    const token = required(form, 'token')
    const hint = single(form, 'token_type_hint')
    const client = await authenticateClient(ctx, c, form)
    const found =
      hint === 'access_token'
        ? ((await accessTokenGrant(ctx, token)) ?? (await refreshTokenGrant(ctx, token)))
        : ((await refreshTokenGrant(ctx, token)) ?? (await accessTokenGrant(ctx, token)))
    if (found) {
      if (found.clientId !== client.clientId) {
        throw new OAuthError('invalid_request', 'The token was issued to another client')
      }
      await ctx.grants.revokeById(found.grantId)
      ctx.logger.info({ clientId: client.clientId, grantId: found.grantId }, 'oauth: grant revoked')
    }
    return c.body(null, 200, { 'Cache-Control': 'no-store', Pragma: 'no-cache' })
  }
}

type TokenGrant = { grantId: string; clientId: string }

async function refreshTokenGrant(
  ctx: OAuthContext,
  token: string,
): Promise<TokenGrant | undefined> {
  const record = await ctx.families.getRefreshToken(token)
  return record && { grantId: record.familyId, clientId: record.clientId }
}

async function accessTokenGrant(ctx: OAuthContext, token: string): Promise<TokenGrant | undefined> {
  if (token.length > 4096 || token.split('.').length !== 3) return undefined
  const result = await verifyAccessToken(token, ctx.accessTokenKey, {
    issuer: ctx.endpoints.issuer,
    audience: ctx.endpoints.resource,
    now: ctx.clock.now(),
  })
  return result.ok
    ? { grantId: result.claims.grant_id, clientId: result.claims.client_id }
    : undefined
}
