/**
 * Is this `client_id` a client ID metadata document URL? An `https` URL with a path, no
 * fragment, no user information and no dot segments; `http` only on a loopback host when
 * development allows it. @see draft-ietf-oauth-client-id-metadata-document §3
 */
export function parseClientIdUrl(value: string, allowLoopback: boolean): URL | undefined {
  if (value.length > 2000 || !/^https?:\/\//i.test(value)) return undefined
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return undefined
  }
  if (url.href !== value) return undefined
  if (url.username || url.password || url.hash || value.includes('#')) return undefined
  if (url.pathname === '/' || /\/\.\.?(\/|$)/.test(value.slice(url.origin.length))) {
    return undefined
  }
  if (url.protocol === 'https:') return url
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)
  return url.protocol === 'http:' && allowLoopback && loopback ? url : undefined
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
