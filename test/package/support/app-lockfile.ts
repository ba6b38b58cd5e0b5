import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { satisfies } from '../../../src/core/peer-versions.ts'

interface LockEntry {
  version?: string
  resolved?: string
  integrity?: string
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
  peerDependenciesMeta?: Record<string, { optional?: boolean }>
  [field: string]: unknown
}

interface Lockfile {
  packages: Record<string, LockEntry>
}

export interface AppManifest {
  name: string
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
}

/**
 * The exact version the repository's lockfile pins for a top-level package, so a test app
 * installs what the repository's own `npm ci` put in the npm cache.
 */
export function pinnedVersion(repoRoot: string, name: string): string {
  const entry = readLockfile(repoRoot).packages[`node_modules/${name}`]
  if (!entry?.version) throw new Error(`${name} is not in the repository's lockfile`)
  return entry.version
}

/**
 * A package-lock.json for a test app: the kiln tarball plus the closure of the app's packages,
 * every entry copied (same place in the tree, same tarball and integrity) from the repository's
 * lockfile. `npm ci` on it needs no registry metadata: every tarball is one the repository's
 * own install already fetched.
 *
 * `substitutes` puts another version of a package in the app's place for it: the one the
 * repository installs under an npm alias (`{ zod: 'peer-floor-zod' }`). A package of the app
 * whose own dependency range that version misses gets the repository's usual copy nested under
 * it, where npm would put it.
 */
export function appLockfile(options: {
  repoRoot: string
  appDir: string
  tarball: string
  manifest: AppManifest
  substitutes?: Record<string, string>
}): object {
  const repo = { ...readLockfile(options.repoRoot).packages }
  const originals = new Map<string, LockEntry>()
  for (const [name, alias] of Object.entries(options.substitutes ?? {})) {
    const root = `node_modules/${name}`
    const original = repo[root]
    const aliased = repo[`node_modules/${alias}`]
    if (!original || !aliased) throw new Error(`${name} or ${alias} is not in the lockfile`)
    originals.set(name, original)
    for (const path of Object.keys(repo)) {
      if (path.startsWith(`${root}/`)) delete repo[path]
    }
    const { name: _name, ...entry } = aliased
    repo[root] = entry
    for (const [path, nested] of Object.entries(repo)) {
      if (path.startsWith(`node_modules/${alias}/`)) {
        repo[`${root}/${path.slice(`node_modules/${alias}/`.length)}`] = nested
      }
    }
  }
  const kiln = JSON.parse(readFileSync(join(options.repoRoot, 'package.json'), 'utf8')) as LockEntry
  const kilnEntry: LockEntry = {
    version: kiln.version,
    resolved: `file:${relative(options.appDir, options.tarball)}`,
    integrity: `sha512-${createHash('sha512').update(readFileSync(options.tarball)).digest('base64')}`,
    license: kiln.license,
    dependencies: kiln.dependencies,
    bin: kiln.bin,
    engines: kiln.engines,
    peerDependencies: kiln.peerDependencies,
    peerDependenciesMeta: kiln.peerDependenciesMeta,
  }
  const packages: Record<string, LockEntry> = {
    '': {
      name: options.manifest.name,
      dependencies: options.manifest.dependencies,
      devDependencies: options.manifest.devDependencies,
    },
    'node_modules/kilnjs': kilnEntry,
  }
  const visit = (from: string, name: string, required: boolean, range?: string) => {
    let path = locate(repo, from, name)
    const original = originals.get(name)
    const found = path === undefined ? undefined : repo[path]?.version
    if (original && path === `node_modules/${name}` && range && !satisfies(found ?? '', range)) {
      // This package needs the version the app replaced: npm nests that copy under it.
      path = `${from}/node_modules/${name}`
      repo[path] = original
    }
    if (path === undefined) {
      if (required)
        throw new Error(`${name} (needed by ${from || 'the app'}) is not in the lockfile`)
      return
    }
    if (packages[path]) return
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = repo[path] as LockEntry
    packages[path] = entry
    walk(path, entry)
  }
  const walk = (path: string, entry: LockEntry) => {
    for (const [name, range] of Object.entries(entry.dependencies ?? {})) {
      visit(path, name, true, range)
    }
    for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
      visit(path, name, false, range)
    }
    for (const name of Object.keys(entry.peerDependencies ?? {})) {
      // npm installs a required peer itself; an optional one only when something else asks.
      if (!entry.peerDependenciesMeta?.[name]?.optional) visit(path, name, true)
    }
  }
  for (const name of Object.keys({
    ...options.manifest.dependencies,
    ...options.manifest.devDependencies,
  })) {
    if (name !== 'kilnjs') visit('', name, true)
  }
  walk('node_modules/kilnjs', kilnEntry)
  return { name: options.manifest.name, lockfileVersion: 3, requires: true, packages }
}

/** Where node would find `name` from the package at `from`: its own node_modules, then up. */
function locate(
  packages: Record<string, LockEntry>,
  from: string,
  name: string,
): string | undefined {
  let base = from
  for (;;) {
    const candidate = base === '' ? `node_modules/${name}` : `${base}/node_modules/${name}`
    if (packages[candidate]) return candidate
    if (base === '') return undefined
    const cut = base.lastIndexOf('/node_modules/')
    base = cut < 0 ? '' : base.slice(0, cut)
  }
}

function readLockfile(repoRoot: string): Lockfile {
  return JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as Lockfile
}
