import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * kiln's required peers (hono, drizzle-orm, zod, …) are the app's own copies. npm refuses an
 * install outside their ranges, but `--legacy-peer-deps`, `--force`, a later
 * `npm install zod@3`, pnpm and Yarn only warn, and the app then fails deep inside kiln
 * (`z.int is not a function`). Checking the versions when kiln is imported turns that into one
 * message naming the package, the version found and the range to install.
 */
export class PeerVersionError extends TypeError {
  readonly packageName: string
  readonly found: string
  readonly supported: string

  constructor(packageName: string, found: string, supported: string, where: string) {
    super(
      `kiln needs ${packageName} ${supported}; this app has ${packageName} ${found} (${where}): ` +
        `npm install '${packageName}@${supported}'`,
    )
    this.name = 'PeerVersionError'
    this.packageName = packageName
    this.found = found
    this.supported = supported
  }
}

type Version = [number, number, number]

/** `x.y.z` (a prerelease or build suffix ignored); in a range, `5` and `5.1` mean 5.0.0 and 5.1.0. */
function parseVersion(text: string, partial = false): Version | undefined {
  const match = /^v?(\d+)(?:\.(\d+)(?:\.(\d+))?)?(?=$|[-+])/.exec(text.trim())
  if (!match || (!partial && match[3] === undefined)) return undefined
  return [Number(match[1]), Number(match[2] ?? 0), Number(match[3] ?? 0)]
}

function compare(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2]
}

/** `^x.y.z` as the two comparators it means: at least x.y.z, below the next breaking version. */
function caret(version: Version): string[] {
  const [major, minor, patch] = version
  const below = major > 0 ? `${major + 1}.0.0` : minor > 0 ? `0.${minor + 1}.0` : `0.0.${patch + 1}`
  return [`>=${version.join('.')}`, `<${below}`]
}

function satisfiesComparator(version: Version, comparator: string): boolean {
  const match = /^(>=|<=|>|<|=)?\s*(.+)$/.exec(comparator)
  const bound = match ? parseVersion(match[2] as string, true) : undefined
  if (!match || !bound) throw new TypeError(`unsupported version range part: ${comparator}`)
  const order = compare(version, bound)
  switch (match[1]) {
    case '>=':
      return order >= 0
    case '>':
      return order > 0
    case '<=':
      return order <= 0
    case '<':
      return order < 0
    default:
      return order === 0
  }
}

/**
 * Whether `version` is inside `range`, for the range syntax kiln's package.json uses:
 * `^x.y.z`, comparators (`>=x.y.z <a.b.c`, all must hold) and alternatives joined by `||`.
 * A prerelease counts as its release (`5.0.0-beta.1` is not below `5.0.0`).
 */
export function satisfies(version: string, range: string): boolean {
  const parsed = parseVersion(version)
  if (!parsed) return false
  return range.split('||').some((alternative) =>
    alternative
      .trim()
      .split(/\s+/)
      .flatMap((part) => {
        if (!part.startsWith('^')) return [part]
        const base = parseVersion(part.slice(1), true)
        if (!base) throw new TypeError(`unsupported version range part: ${part}`)
        return caret(base)
      })
      .every((comparator) => satisfiesComparator(parsed, comparator)),
  )
}

interface Manifest {
  name?: string
  version?: string
  peerDependencies?: Record<string, string>
  peerDependenciesMeta?: Record<string, { optional?: boolean }>
}

function readManifest(file: string): Manifest {
  return JSON.parse(readFileSync(file, 'utf8')) as Manifest
}

/**
 * The package.json of `packageName` as kiln itself would load it (the copy kiln's imports
 * resolve to, which may be nested), or undefined when it is not installed. Found by walking
 * up from its entry file, since not every package exports `./package.json`.
 */
export function installedManifest(
  packageName: string,
  from: string,
): { version: string; file: string } | undefined {
  let entry: string
  try {
    entry = createRequire(from).resolve(packageName)
  } catch {
    return undefined
  }
  for (let dir = dirname(entry); ; dir = dirname(dir)) {
    const file = join(dir, 'package.json')
    if (existsSync(file)) {
      const manifest = readManifest(file)
      if (manifest.name === packageName && manifest.version) {
        return { version: manifest.version, file }
      }
    }
    if (dirname(dir) === dir) return undefined
  }
}

/**
 * Checks every required peer of a package.json (kiln's own, by default) that is installed
 * against its range; throws PeerVersionError for the first one outside. A peer that is not
 * installed is left to the import that needs it, whose error names it.
 */
export function assertPeerVersions(
  manifestFile: string = fileURLToPath(new URL('../../package.json', import.meta.url)),
): void {
  // Bundled into an app's single file, kiln has no package.json of its own beside it.
  if (!existsSync(manifestFile)) return
  const manifest = readManifest(manifestFile)
  if (manifest.name !== 'kilnjs') return
  const { peerDependencies = {}, peerDependenciesMeta = {} } = manifest
  for (const [name, range] of Object.entries(peerDependencies)) {
    if (peerDependenciesMeta[name]?.optional) continue
    const installed = installedManifest(name, manifestFile)
    if (installed && !satisfies(installed.version, range)) {
      throw new PeerVersionError(name, installed.version, range, installed.file)
    }
  }
}
