import type { OAuthContext } from './context.ts'
import type { RegisteredClient } from './protocol/client-metadata.ts'

/**
 * The client a `client_id` names: a client metadata document when it is a URL (CIMD), else a
 * registered (DCR) client.
 */
export async function resolveClient(
  ctx: OAuthContext,
  clientId: string,
): Promise<RegisteredClient | undefined> {
  if (ctx.documents.isDocumentUrl(clientId)) return ctx.documents.resolve(clientId)
  return ctx.clients.get(clientId)
}
