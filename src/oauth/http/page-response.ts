import { securityHeaderValues } from '../../core/http/security-headers.ts'

/**
 * Headers of every HTML page the authorization server renders: kiln's page security headers
 * (no framing, no outside resources, no referrer, never cached). No `form-action`: browsers
 * apply it to the redirect after the consent POST, which goes to the client's redirect URI.
 */
export const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/html; charset=utf-8',
  ...securityHeaderValues(),
}

export function htmlResponse(html: string, status = 200): Response {
  return new Response(html, { status, headers: PAGE_SECURITY_HEADERS })
}

/** A 303 See Other (after a form POST) or a 302 redirect that is never cached. */
export function redirectResponse(location: string, status: 302 | 303 = 302): Response {
  return new Response(null, {
    status,
    headers: { Location: location, 'Cache-Control': 'no-store' },
  })
}
