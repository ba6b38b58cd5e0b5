import { hash } from 'node:crypto'
import type { Context } from 'hono'
import {
  type PlainHeaders,
  type PlainResponsesOptions,
  plainResponses,
} from '../../core/http/index.ts'

/**
 * HTTP caching for an authenticated API, as one middleware:
 * - every response gets `Cache-Control: private, no-cache` (unless the handler set its own)
 *   and `Vary: Authorization`: shared caches never store a key's data, private ones revalidate;
 * - a 200 JSON answer to GET carries a strong `ETag` (a digest of the body's bytes, so it works
 *   on lists and single records alike); a request whose `If-None-Match` names it is answered
 *   304 without a body, which saves the transfer and the client's parsing (the query still
 *   runs). Strong, because `If-Match` compares strongly (`checkIfMatch`).
 *
 * It is also where the group's responses are built (`plainResponses`): the digest is taken of
 * the JSON text `c.json()` writes, so a body is serialized once and never read back.
 * @see RFC 9110 §8.8.3 (ETag), §13.1.2 (If-None-Match, weak comparison), RFC 9111 §5.2.2 (private, no-cache)
 * @example
 * ```ts
 * app.use('/api/admin/*', apiKeyAuth({ provider: apiKeys }), privateCache())
 * ```
 */
export function privateCache() {
  return plainResponses(PRIVATE_CACHE)
}

/** What `privateCache` adds to the answers it builds (`apiGuard` builds them the same way). */
export const PRIVATE_CACHE: PlainResponsesOptions = {
  cacheControl: 'private, no-cache',
  vary: 'Authorization',
  beforeJson: tagJson,
}

function tagJson(c: Context, text: string, status: number, headers: PlainHeaders) {
  if (status !== 200 || (c.req.method !== 'GET' && c.req.method !== 'HEAD')) return undefined
  const tag = entityTag(text)
  headers.etag = tag
  if (!matches(c.req.header('if-none-match'), tag)) return undefined
  const { 'content-type': _type, 'content-length': _length, ...kept } = headers
  return new Response(null, { status: 304, headers: kept as HeadersInit })
}

/**
 * The strong entity tag of a JSON answer's text: the same bytes give the same tag, any change
 * another. `checkIfMatch` computes it again for the record a write would change.
 */
export function entityTag(text: string): string {
  return `"${hash('sha256', text, 'base64url').slice(0, 27)}"`
}

/** Weak comparison of If-None-Match against a tag: `*`, or any listed tag with or without `W/`. */
function matches(header: string | undefined, tag: string): boolean {
  if (!header) return false
  if (header.trim() === '*') return true
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === tag)
}
