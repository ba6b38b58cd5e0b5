import { AUTO_EXCLUDED_FIELDS } from '../../core/credentials.ts'

export { AUTO_EXCLUDED_FIELDS }

/** Options of `isExcludedField`. */
export interface ExclusionOptions {
  /** Further fields to leave out (`--exclude a,b`); they stack with the automatic ones. */
  exclude?: readonly string[]
  /** Turn the automatic exclusion off (`--include-all`); `exclude` still applies. */
  includeAll?: boolean
}

/**
 * Whether a field stays out of a resource. `names` are the field's names (its column name
 * and its property name, e.g. `password_hash` and `passwordHash`): any of them matching
 * excludes it.
 */
export function isExcludedField(
  names: string | readonly string[],
  { exclude = [], includeAll = false }: ExclusionOptions = {},
): boolean {
  const candidates = (typeof names === 'string' ? [names] : names).map((n) => n.toLowerCase())
  const extra = exclude.map((n) => n.trim().toLowerCase()).filter(Boolean)
  return candidates.some(
    (name) => extra.includes(name) || (!includeAll && AUTO_EXCLUDED_FIELDS.includes(name)),
  )
}

/**
 * A conditional resource field: the value when `condition` holds, otherwise undefined, which
 * leaves the key out of the JSON response. `value` may be a function, evaluated only when the
 * condition holds.
 *
 * ```ts
 * internal_notes: when(canSeeNotes, post.internalNotes)
 * ```
 */
export function when<T>(condition: unknown, value: T | (() => T)): T | undefined {
  if (!condition) return undefined
  return typeof value === 'function' ? (value as () => T)() : value
}
