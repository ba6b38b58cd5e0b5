import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { type RunningProcess, repoRoot } from '../../support/processes.ts'
import { type AppManifest, appLockfile, pinnedVersion } from './app-lockfile.ts'

const execFileAsync = promisify(execFile)

/** A clean environment: nothing of the test runner's npm or vitest settings leaks in. */
export function appEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn' }
  for (const name of ['HOME', 'TMPDIR', 'npm_config_cache']) {
    const value = process.env[name]
    if (value) env[name] = value
  }
  return { ...env, ...extra }
}

/**
 * Runs a command in the app as a script does: no terminal, nothing on standard input (closed at
 * once). A failure throws with everything it printed.
 */
export async function run(
  cwd: string,
  command: string,
  args: string[],
  env: Record<string, string> = appEnv(),
): Promise<string> {
  try {
    const running = execFileAsync(command, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 })
    running.child.stdin?.end()
    const { stdout, stderr } = await running
    return stdout + stderr
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string }
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${stdout}\n${stderr}`, {
      cause: error,
    })
  }
}

export interface AppSpec {
  name: string
  /** The fixture folder under test/package/fixtures holding schema.ts. */
  fixture: string
  /** Runtime packages beside kiln (the driver of the app's database). */
  runtime: string[]
  /**
   * Other versions of the app's packages: name → the npm alias under which the repository
   * installs that version (`{ zod: 'peer-floor-zod' }`), so it is in the npm cache.
   */
  substitutes?: Record<string, string>
  /** Extra `npm ci` flags (`--legacy-peer-deps` for an app whose peer is out of range). */
  npmFlags?: string[]
}

/**
 * Native modules the app installs without their build step, with the binary the repository's
 * own install built copied in: the same version for the same Node, so the test spends no minutes
 * compiling what CI compiled already (offline, better-sqlite3 has no prebuilt to download).
 */
const PREBUILT: Record<string, string> = {
  'better-sqlite3': 'build/Release/better_sqlite3.node',
}

/** kiln's required peers: what every app installs beside it. */
export const PEERS = [
  'hono',
  '@hono/node-server',
  'drizzle-orm',
  'zod',
  '@modelcontextprotocol/server',
]
/** What the kiln command and the checks use: drizzle-kit, the TypeScript loader, api:check. */
const DEV = ['drizzle-kit', 'tsx', 'typescript', '@types/node', '@apidevtools/swagger-parser']

/**
 * A new app outside the repository: package.json, its schema at src/db/schema.ts, and a
 * lockfile whose every package is one the repository's lockfile pins; installed with `npm ci`
 * from the npm cache.
 */
export async function createApp(dir: string, spec: AppSpec, tarball: string): Promise<void> {
  mkdirSync(join(dir, 'src', 'db'), { recursive: true })
  cpSync(
    join(repoRoot, 'test/package/fixtures', spec.fixture, 'schema.ts'),
    join(dir, 'src/db/schema.ts'),
  )
  const substitutes = spec.substitutes ?? {}
  const pin = (names: string[]) =>
    Object.fromEntries(
      names.map((name) => [name, pinnedVersion(repoRoot, substitutes[name] ?? name)]),
    )
  const manifest: AppManifest = {
    name: spec.name,
    dependencies: { kilnjs: `file:${tarball}`, ...pin([...PEERS, ...spec.runtime]) },
    devDependencies: pin(DEV),
  }
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ ...manifest, private: true, type: 'module' }, null, 2)}\n`,
  )
  const lockfile = appLockfile({ repoRoot, appDir: dir, tarball, manifest, substitutes })
  writeFileSync(join(dir, 'package-lock.json'), `${JSON.stringify(lockfile, null, 2)}\n`)
  const native = spec.runtime.filter((name) => name in PREBUILT)
  const flags = [...(native.length > 0 ? ['--ignore-scripts'] : []), ...(spec.npmFlags ?? [])]
  await run(dir, 'npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund', ...flags])
  for (const name of native) {
    const binary = PREBUILT[name] as string
    mkdirSync(dirname(join(dir, 'node_modules', name, binary)), { recursive: true })
    cpSync(join(repoRoot, 'node_modules', name, binary), join(dir, 'node_modules', name, binary))
  }
}

/** Installed packages that carry a native addon's sources (a binding.gyp to compile). */
export function nativeAddons(dir: string): string[] {
  const found: string[] = []
  const visit = (modules: string) => {
    if (!existsSync(modules)) return
    for (const entry of readdirSync(modules)) {
      if (entry.startsWith('.')) continue
      const names = entry.startsWith('@')
        ? readdirSync(join(modules, entry)).map((name) => `${entry}/${name}`)
        : [entry]
      for (const name of names) {
        if (existsSync(join(modules, name, 'binding.gyp'))) found.push(name)
        visit(join(modules, name, 'node_modules'))
      }
    }
  }
  visit(join(dir, 'node_modules'))
  return found
}

/** Reads the key out of `kilnjs make:api-key --save`'s output. */
export function keyFrom(output: string): string {
  const key = /Key:\s+(kl_\S+)/.exec(output)?.[1]
  if (!key) throw new Error(`no key in make:api-key's output:\n${output}`)
  return key
}

export async function stopApp(app: RunningProcess | undefined): Promise<void> {
  await app?.stop()
}
