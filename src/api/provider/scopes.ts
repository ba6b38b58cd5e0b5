/** Scope strings: letters, digits and `_ - . : / *`, at most 100 characters. */
const SCOPE_PATTERN = /^[A-Za-z0-9_.:/*-]{1,100}$/

export function isValidScope(scope: string): boolean {
  return typeof scope === 'string' && SCOPE_PATTERN.test(scope)
}

/**
 * Reads the `scopes` column: null means no scopes; otherwise it must be a JSON array of
 * strings. Returns undefined for anything else, so a corrupted row is never half-trusted.
 */
export function parseScopesColumn(value: string | null): string[] | undefined {
  if (value === null) return []
  let parsed: unknown
  try {
    parsed = JSON.parse(value)
  } catch {
    return undefined
  }
  if (!Array.isArray(parsed) || !parsed.every((scope) => typeof scope === 'string')) {
    return undefined
  }
  return parsed as string[]
}

/** The scopes of `required` that `granted` lacks. */
export function missingScopes(granted: readonly string[], required: readonly string[]): string[] {
  if (granted.includes('*')) return []
  return required.filter((scope) => !granted.includes(scope))
}
