/**
 * Headers of every HTML page the authorization server renders: no framing (clickjacking),
 * no external anything, no referrer (URLs carry codes), never cached (pages carry CSRF tokens).
 * No `form-action`: browsers apply it to the redirect after the consent POST, which goes to
 * the client's own redirect URI.
 */
export const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/html; charset=utf-8',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
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
