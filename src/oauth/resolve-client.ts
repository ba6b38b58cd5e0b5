import type { LimitRequest } from '../core/http/rate-limiters.ts'
import { assertAllowed } from '../core/http/throttle.ts'
import type { OAuthContext } from './context.ts'
import type { RegisteredClient } from './protocol/client-metadata.ts'

/**
 * The client a `client_id` names: a client metadata document when it is a URL (CIMD), else a
 * registered (DCR) client. A document that must be fetched counts against the requester's
 * address (`oauth-cimd-fetch`): over the limit the request is refused with 429, so nobody
 * makes the server fetch URLs of their choosing without bound.
 */
export async function resolveClient(
  ctx: OAuthContext,
  clientId: string,
  requester: LimitRequest,
): Promise<RegisteredClient | undefined> {
  if (!ctx.documents.isDocumentUrl(clientId)) return ctx.clients.get(clientId)
  return ctx.documents.resolve(clientId, async () => {
    assertAllowed(await ctx.limiters.consume('oauth-cimd-fetch', requester))
  })
}
