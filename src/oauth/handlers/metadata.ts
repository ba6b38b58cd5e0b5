import type { Handler } from 'hono'
import type { OAuthContext } from '../context.ts'
import { authorizationServerMetadata } from '../protocol/metadata.ts'

/** GET /.well-known/oauth-authorization-server. @see RFC 8414 §3 */
export function metadataHandler(ctx: OAuthContext): Handler {
  const body = authorizationServerMetadata(ctx.endpoints, ctx.scopes)
  return function authorizationServerMetadataHandler(c) {
    return c.json(body)
  }
}
