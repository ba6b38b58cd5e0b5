import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve, sep } from 'node:path'

/** What the app's own modules already do with the generated API. */
export interface AppWiring {
  /** A module calls `apiRoutes(…)` (it imports and registers the API). */
  apiRoutes: boolean
  /** That call passes `hashPassword`. */
  hashPassword: boolean
  /** A module calls `docsRoutes(…)`. */
  docsRoutes: boolean
  /** The module that makes the app's Hono app (`new Hono(`), where kiln is mounted. */
  entry: string | undefined
}

/** Folders that hold no module of the app's own. */
const SKIPPED = new Set(['node_modules', 'dist', 'build', 'storage', 'coverage', 'tmp'])
/** Enough for any app's own modules; a bigger tree is not read further. */
const MAX_FILES = 5_000

/**
 * Reads the app's modules (under `root`, outside the generated API in `outDir`) for the wiring
 * `make:api` asks for, so its next steps name only what is still missing.
 */
export function readAppWiring(root: string, outDir: string): AppWiring {
  const wiring: AppWiring = {
    apiRoutes: false,
    hashPassword: false,
    docsRoutes: false,
    entry: undefined,
  }
  const generated = resolve(outDir) + sep
  for (const file of appModules(resolve(root), generated)) {
    const text = readFileSync(file, 'utf8')
    const call = /\bapiRoutes\(\s*\{([^)]*)\}/.exec(text)
    if (call) {
      wiring.apiRoutes = true
      wiring.hashPassword ||= /\bhashPassword\b/.test(call[1] ?? '')
    }
    wiring.docsRoutes ||= /\bdocsRoutes\(/.test(text)
    if (wiring.entry === undefined && /\bnew Hono\b/.test(text)) wiring.entry = file
  }
  return wiring
}

function appModules(root: string, generated: string): string[] {
  const found: string[] = []
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (found.length >= MAX_FILES) return
      const path = join(dir, entry.name)
      if (entry.isDirectory()) {
        if (
          !entry.name.startsWith('.') &&
          !SKIPPED.has(entry.name) &&
          `${path}${sep}` !== generated
        ) {
          visit(path)
        }
      } else if (/\.[cm]?[jt]s$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
        found.push(path)
      }
    }
  }
  visit(root)
  return found
}
