/** `T` with the keys named in `M` renamed; optional keys stay optional. */
export type RenameKeys<T, M extends Record<string, string>> = {
  [K in keyof T as K extends keyof M ? M[K] : K]: T[K]
}

/**
 * Renames an object's keys: request bodies arrive in snake_case (`author_id`) and Drizzle
 * tables take their properties (`authorId`). Keys not in `names` are kept; absent keys stay
 * absent, so a partial update only sets what the request held.
 */
export function renameKeys<T extends object, const M extends Record<string, string>>(
  value: T,
  names: M,
): RenameKeys<T, M> {
  const out: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(value)) {
    if (child === undefined) continue
    out[Object.hasOwn(names, key) ? names[key]! : key] = child
  }
  return out as RenameKeys<T, M>
}

/** True when a parsed update body sets at least one field. */
export function hasFields(value: object): boolean {
  return Object.values(value).some((child) => child !== undefined)
}
