import type { Handler } from 'hono'
import { assertAllowed, limitRequest } from '../../core/http/throttle.ts'
import type { OAuthContext } from '../context.ts'
import { OAuthError } from '../errors.ts'
import { parseClientMetadata, registrationResponse } from '../protocol/client-metadata.ts'
import { randomToken } from '../protocol/random.ts'
import { sweepUnusedClients } from '../store/client-expiry.ts'

/**
 * POST /register: public Dynamic Client Registration, rate limited per client IP.
 * @see RFC 7591 §3
 */
export function registerHandler(ctx: OAuthContext): Handler {
  return async function registerClient(c) {
    assertAllowed(await ctx.limiters.consume('oauth-register', limitRequest(c, ctx.limiters)))
    // A cap over all addresses: many addresses cannot fill the client table either.
    assertAllowed(await ctx.limiters.consume('oauth-register-all', limitRequest(c, ctx.limiters)))
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
