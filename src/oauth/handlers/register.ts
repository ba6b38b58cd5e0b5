import type { Handler } from 'hono'
import { TooManyRequestsError } from '../../core/errors.ts'
import { clientAddress } from '../../core/http/client-ip.ts'
import type { OAuthContext } from '../context.ts'
import { OAuthError } from '../errors.ts'
import { hit } from '../http/throttle.ts'
import { parseClientMetadata, registrationResponse } from '../protocol/client-metadata.ts'
import { randomToken } from '../protocol/random.ts'

/**
 * POST /register: public Dynamic Client Registration, rate limited per client IP.
 * @see RFC 7591 §3
 */
export function registerHandler(ctx: OAuthContext): Handler {
  const limit = ctx.limits.registration
  return async function registerClient(c) {
    if (await hit(ctx.store, `register:${clientAddress(c, ctx.trustProxy)}`, limit)) {
      throw new TooManyRequestsError(Math.ceil(limit.windowMs / 1000))
    }
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
