import type { OAuthContext } from './context.ts'
import type { RegisteredClient } from './protocol/client-metadata.ts'

/** The client a `client_id` names: a registered (DCR) client. */
export async function resolveClient(
  ctx: OAuthContext,
  clientId: string,
): Promise<RegisteredClient | undefined> {
  return ctx.clients.get(clientId)
}
