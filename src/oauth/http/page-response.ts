import { securityHeaderValues } from '../../core/http/security-headers.ts'

/**
 * Headers of every HTML page the authorization server renders: kiln's page security headers
 * (no framing, no outside resources, never cached). No `form-action`: browsers apply it to the
 * redirect after the consent POST, which goes to the client's redirect URI.
 *
 * The referrer policy is `same-origin` rather than `no-referrer`: under `no-referrer` browsers
 * send `Origin: null` with the page's form posts, and the Origin check of the consent, device
 * and connected-apps forms needs the real origin. Other sites (the client's redirect URI
 * included) still receive no referrer.
 */
export const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/html; charset=utf-8',
  ...securityHeaderValues(),
  'Referrer-Policy': 'same-origin',
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
