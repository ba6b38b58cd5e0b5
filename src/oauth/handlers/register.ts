import type { Handler } from 'hono'
import { assertAllowed, limitRequest } from '../../core/http/throttle.ts'
import type { OAuthContext } from '../context.ts'
import { OAuthError } from '../errors.ts'
import { parseClientMetadata, registrationResponse } from '../protocol/client-metadata.ts'
import { randomToken } from '../protocol/random.ts'
import { sweepUnusedClients } from '../store/client-expiry.ts'

/**
 * POST /register: public Dynamic Client Registration, rate limited per client IP; valid
 * registrations also count against a cap over all addresses. @see RFC 7591 §3
 */
export function registerHandler(ctx: OAuthContext): Handler {
  return async function registerClient(c) {
    const request = limitRequest(c, ctx.limiters)
    assertAllowed(await ctx.limiters.consume('oauth-register', request))
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
    // The cap over all addresses keeps many addresses from filling the client table. It counts
    // only what is about to be stored (counted and checked in one step), so malformed requests
    // from many addresses cannot lock everyone out: those meet the per-address limit alone.
    assertAllowed(await ctx.limiters.consume('oauth-register-all', request))
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
