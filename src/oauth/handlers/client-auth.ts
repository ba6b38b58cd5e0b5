import type { Context } from 'hono'
import { limitRequest } from '../../core/http/throttle.ts'
import type { OAuthContext } from '../context.ts'
import { OAuthError } from '../errors.ts'
import { single } from '../http/params.ts'
import type { RegisteredClient } from '../protocol/client-metadata.ts'
import { resolveClient } from '../resolve-client.ts'

/** `client_id` from the body, or the user name of HTTP Basic from clients that insist on it. */
export async function authenticateClient(
  ctx: OAuthContext,
  c: Context,
  form: URLSearchParams,
): Promise<RegisteredClient> {
  const fromBody = single(form, 'client_id')
  const basic = /^Basic\s+(\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1]
  const fromBasic = basic === undefined ? undefined : basicClientId(basic)
  if (fromBody && fromBasic && fromBody !== fromBasic) {
    throw new OAuthError('invalid_request', 'client_id differs between the body and Basic')
  }
  const clientId = fromBody ?? fromBasic
  if (!clientId) throw new OAuthError('invalid_request', 'client_id is required')
  const client = await resolveClient(ctx, clientId, limitRequest(c, ctx.limiters))
  if (!client) {
    throw new OAuthError('invalid_client', 'Unknown client', basic ? { challenge: 'Basic' } : {})
  }
  return client
}

/**
 * The client id in the user part of HTTP Basic, form-urlencoded as RFC 6749 §2.3.1 says.
 * Malformed credentials are `invalid_client` with a `Basic` challenge. @see RFC 6749 §5.2
 */
function basicClientId(credentials: string): string {
  const userPart = Buffer.from(credentials, 'base64').toString('utf8').split(':')[0] ?? ''
  let clientId: string
  try {
    clientId = decodeURIComponent(userPart.replace(/\+/g, ' '))
  } catch {
    throw new OAuthError('invalid_client', 'The Basic credentials are not form-urlencoded', {
      challenge: 'Basic',
    })
  }
  if (!clientId) {
    throw new OAuthError('invalid_client', 'The Basic credentials name no client', {
      challenge: 'Basic',
    })
  }
  return clientId
}
