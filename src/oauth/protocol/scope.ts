/** Splits a space-delimited scope string into distinct scope tokens. @see RFC 6749 §3.3 */
export function parseScope(value: string | undefined): string[] {
  if (!value) return []
  return [...new Set(value.split(' ').filter((token) => token.length > 0))]
}

export function formatScope(scopes: string[]): string {
  return scopes.join(' ')
}

/**
 * The scopes granted for a request: the requested ones the server knows (others are ignored,
 * as RFC 6749 §3.3 allows, because some clients always send their own), or all supported
 * scopes when none of the requested ones is known.
 */
export function grantScopes(requested: string | undefined, supported: string[]): string[] {
  const known = parseScope(requested).filter((scope) => supported.includes(scope))
  return known.length > 0 ? known : [...supported]
}

/** True when every scope of `requested` is in `granted`: a refresh may narrow, never widen. */
export function isScopeSubset(requested: string[], granted: string[]): boolean {
  return requested.every((scope) => granted.includes(scope))
}
