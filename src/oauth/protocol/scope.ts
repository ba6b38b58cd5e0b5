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

/** The scopes of the MCP endpoint: reading through its tools, and changing data through them. */
export const MCP_READ_SCOPE = 'mcp:read'
export const MCP_WRITE_SCOPE = 'mcp:write'
export const DEFAULT_SCOPES = [MCP_READ_SCOPE, MCP_WRITE_SCOPE]

/** What the consent and connected-apps pages say each scope allows. */
export const DEFAULT_SCOPE_DESCRIPTIONS: Readonly<Record<string, string>> = {
  [MCP_READ_SCOPE]: 'Read your data through the assistant tools',
  [MCP_WRITE_SCOPE]: 'Create, change and delete your data through the assistant tools',
}

/** A scope in plain words, or undefined when none is configured for it. */
export function describeScope(
  scope: string,
  descriptions: Readonly<Record<string, string>>,
): string | undefined {
  return Object.hasOwn(descriptions, scope) ? descriptions[scope] : undefined
}
