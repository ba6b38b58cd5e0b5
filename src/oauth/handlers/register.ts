import type { Handler } from 'hono'
import { assertAllowed, limitRequest } from '../../core/http/throttle.ts'
import type { OAuthContext } from '../context.ts'
import { OAuthError } from '../errors.ts'
import { parseClientMetadata, registrationResponse } from '../protocol/client-metadata.ts'
import { randomToken } from '../protocol/random.ts'
import { makeRoomForRegistration, sweepUnusedClients } from '../store/client-expiry.ts'

/**
 * POST /register: Dynamic Client Registration, rate limited per client IP, open or behind an
 * initial access token. What it stores is bounded (`maxUnusedClients`), not what it is asked:
 * nobody's registrations can refuse another's. @see RFC 7591 §3
 */
export function registerHandler(ctx: OAuthContext): Handler {
  return async function registerClient(c) {
    const request = limitRequest(c, ctx.limiters)
    assertAllowed(await ctx.limiters.consume('oauth-register', request))
    assertInitialAccessToken(ctx, c.req.header('authorization'))
    if (!/^application\/json\b/i.test(c.req.header('content-type') ?? '')) {
      throw new OAuthError('invalid_client_metadata', 'The body must be application/json')
    }
    let body: unknown
    try {
      body = JSON.parse(await c.req.text())
    } catch {
      throw new OAuthError('invalid_client_metadata', 'The body is not valid JSON')
    }
    const client = parseClientMetadata(body, {
      clientId: randomToken(ctx.random, 18),
      issuedAt: Math.floor(ctx.clock.now() / 1000),
    })
    await makeRoomForRegistration(ctx)
    await ctx.clients.register(client)
    await sweepUnusedClients(ctx)
    ctx.logger.info(
      { clientId: client.clientId, clientName: client.clientName },
      'oauth: client registered',
    )
    return c.json(registrationResponse(client), 201, {
      'Cache-Control': 'no-store',
      Pragma: 'no-cache',
    })
  }
}

/** With initial access tokens configured, the request must carry one. @see RFC 7591 §3, RFC 6750 §3 */
function assertInitialAccessToken(ctx: OAuthContext, authorization: string | undefined): void {
  if (ctx.initialAccessTokens.length === 0) return
  const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1]
  // Every token compared, so the time taken says nothing about which one came close.
  let held = false
  for (const expected of ctx.initialAccessTokens) held = expected.equals(token ?? '') || held
  if (!held) {
    throw new OAuthError(
      'invalid_token',
      'Registration needs an initial access token (Authorization: Bearer …) this server issued',
      { challenge: 'Bearer' },
    )
  }
}
