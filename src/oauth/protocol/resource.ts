/**
 * The resource a grant is for. Missing → the canonical MCP URL; otherwise it must be an
 * absolute URI without a fragment naming this resource (a trailing slash is tolerated).
 * Returns undefined for a foreign, relative or fragment resource (`invalid_target`).
 * @see RFC 8707 §2, MCP authorization "Resource Parameter Implementation"
 */
export function resolveResource(values: string[], canonical: string): string | undefined {
  if (values.length === 0) return canonical
  const distinct = new Set(values)
  if (distinct.size > 1) return undefined
  const value = values[0] as string
  if (value.includes('#') || !/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return undefined
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return undefined
  }
  const normalized = url.href.replace(/\/$/, '')
  return normalized === canonical ? canonical : undefined
}
