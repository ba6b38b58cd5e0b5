/**
 * The CDN edge URL of `path`: the base and the path joined with exactly one slash between
 * them. Pure string composition, no network call and no encoding (pass a URL path).
 */
export function cdnUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`
}

/** The full public URL of a purge path, encoded for use in a request (`*` stays as is). */
export function purgeTargetUrl(base: string, path: string): string {
  return cdnUrl(base, encodeURI(path))
}
