/** A `client_id` URL accepted as a document URL, or why it is not one (safe to log). */
export type ClientIdUrl = { url: URL; refused?: undefined } | { url?: undefined; refused: string }

/**
 * Is this `client_id` a client ID metadata document URL? An `https` URL with a path, no
 * fragment, no user information and no dot segments; `http` only on a loopback host when
 * development allows it. @see draft-ietf-oauth-client-id-metadata-document §3
 */
export function parseClientIdUrl(value: string, allowLoopback: boolean): ClientIdUrl {
  const refused = (reason: string) => ({ refused: reason })
  if (value.length > 2000) return refused('the client_id URL is longer than 2000 characters')
  if (!/^https?:\/\//i.test(value)) return refused('the client_id is not an http(s) URL')
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return refused('the client_id is not a valid URL')
  }
  if (url.href !== value) {
    return refused(
      'the client_id URL is not in normalized form (lower-case scheme and host, no dot segments)',
    )
  }
  if (url.username || url.password || url.hash || value.includes('#')) {
    return refused('the client_id URL must not carry user information or a fragment')
  }
  if (url.pathname === '/' || /\/\.\.?(\/|$)/.test(value.slice(url.origin.length))) {
    return refused('the client_id URL needs a path, without dot segments')
  }
  if (url.protocol === 'https:') return { url }
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
    return refused('the client_id URL must use https (http only on a loopback host)')
  }
  if (!allowLoopback) {
    return refused('an http loopback client_id URL needs allowLoopback (development only)')
  }
  return { url }
}

/** Seconds to cache a document for, from its `Cache-Control`, within the bounds. */
export function cacheSeconds(
  cacheControl: string | null,
  bounds: { defaultSeconds: number; maxSeconds: number },
): number {
  if (!cacheControl) return bounds.defaultSeconds
  const directives = cacheControl
    .toLowerCase()
    .split(',')
    .map((part) => part.trim())
  if (directives.some((d) => d === 'no-store' || d === 'no-cache')) return 0
  const maxAge = directives.find((d) => d.startsWith('max-age='))
  if (maxAge === undefined) return bounds.defaultSeconds
  const seconds = Number(maxAge.slice('max-age='.length))
  if (!Number.isInteger(seconds) || seconds < 0) return 0
  return Math.min(seconds, bounds.maxSeconds)
}
