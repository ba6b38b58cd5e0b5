import type { Handler } from 'hono'
import type { OAuthContext } from '../context.ts'
import { protectedResourceMetadata } from '../protocol/metadata.ts'

/**
 * GET /.well-known/oauth-protected-resource and /.well-known/oauth-protected-resource/mcp.
 * @see RFC 9728 §3
 */
export function protectedResourceHandler(ctx: OAuthContext): Handler {
  const body = protectedResourceMetadata(ctx.endpoints, ctx.scopes)
  return function protectedResourceMetadataHandler(c) {
    return c.json(body)
  }
}
