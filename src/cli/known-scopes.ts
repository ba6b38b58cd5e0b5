import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * `scopeGuard('posts:read', …)` and `requireScopes(c, 'posts:read', …)`: their string arguments;
 * a resource definition's `scopes: { read: 'posts:read', … }`: its values.
 */
const SCOPE_CALL = /\b(?:scopeGuard\(|requireScopes\(|scopes: \{)([^)}]*)[)}]/g
const STRING = /'([^'\n]*)'|"([^"\n]*)"/g

/**
 * The scopes the app's API requires, read from its code under `apiDir` (the generated
 * controllers name them in their definition's `scopes`, a developer's routes in `scopeGuard`).
 * Undefined when the folder holds no API yet, so there is nothing to compare a scope with.
 */
export function knownScopes(apiDir: string): string[] | undefined {
  if (!existsSync(apiDir)) return undefined
  const found = new Set<string>()
  for (const file of sourceFiles(apiDir)) {
    for (const call of readFileSync(file, 'utf8').matchAll(SCOPE_CALL)) {
      for (const literal of (call[1] ?? '').matchAll(STRING)) {
        const scope = literal[1] ?? literal[2]
        if (scope) found.add(scope)
      }
    }
  }
  return found.size === 0 ? undefined : [...found].sort()
}

/** The scopes of `scopes` that no route requires (`*` grants every one, so it is never unknown). */
export function unknownScopes(scopes: readonly string[], known: readonly string[]): string[] {
  return scopes.filter((scope) => scope !== '*' && !known.includes(scope))
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path)
    return /\.[cm]?[jt]s$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}
