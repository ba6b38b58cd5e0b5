import { existsSync, readFileSync } from 'node:fs'
import { isAbsolute, join, resolve } from 'node:path'
import type { Env } from '../core/config/index.ts'
import { firstLineOf } from '../core/first-line.ts'
import { MissingPackageError } from '../core/optional-package.ts'
import {
  DATABASE_URL_FORMS,
  databaseUrlDialect,
  databaseUrlKind,
  sqlitePath,
} from '../db/database.ts'
import { createDatabase, type Database, type KilnConfig, pgliteDir } from '../db/index.ts'
import { CliError } from './cli-error.ts'
import { loadKilnConfig } from './models/load.ts'

export interface OpenAppDatabaseOptions {
  /** Where to look for kiln.config.ts; the current directory by default. */
  cwd?: string
  /** Environment variables; `process.env` by default. */
  env?: Env
}

/** Where the database came from, so commands can say which one they act on. */
export type AppDatabaseSource = 'DATABASE_URL' | 'kiln.config.ts' | 'shared-pglite' | 'embedded'

export interface AppDatabase {
  database: Database
  kilnConfig: KilnConfig
  /** The app's root: the folder of kiln.config.ts. */
  root: string
  source: AppDatabaseSource
  /** A human description of the database, without credentials. */
  description: string
  close(): Promise<void>
}

/** The file the running demo writes while it shares its embedded database on a socket. */
export const SHARED_DATABASE_FILE = join('storage', 'kiln-db.json')

/**
 * Opens the database of the app in `cwd`, trying in order: `DATABASE_URL`, kiln.config.ts's
 * `databaseUrl`, the running app's shared PGlite socket (a Postgres app started with
 * `npm start`), then the embedded default: PGlite in `storage/pgdata` for a Postgres app,
 * `storage/app.db` for a SQLite app. Every failure is a one-line CliError.
 */
export async function openAppDatabase(options: OpenAppDatabaseOptions = {}): Promise<AppDatabase> {
  const env = options.env ?? process.env
  const cwd = resolve(options.cwd ?? process.cwd())
  const envUrl = env.DATABASE_URL || undefined
  if (envUrl !== undefined && databaseUrlKind(envUrl) === undefined) {
    throw new CliError(`DATABASE_URL is not a database URL: ${DATABASE_URL_FORMS}`)
  }
  const { config, root } = await loadKilnConfig(cwd)
  const target = await resolveTarget(config, root, cwd, envUrl)
  let database: Database
  try {
    // A command sends its queries one after another, and the running app's PGlite socket
    // serves one connection: nothing to pipeline. Notes go to stderr: stdout is the command's
    // output (`kilnjs audit --json`).
    database = await createDatabase(target.url, {
      poolMax: target.poolMax,
      pipelineConnections: 0,
      logger: { info: (message) => process.stderr.write(`${message}\n`) },
    })
  } catch (error) {
    // No DATABASE_URL and no PGlite: the setting is what is missing, not the package.
    if (
      error instanceof MissingPackageError &&
      target.source === 'embedded' &&
      config.dialect === 'postgres'
    ) {
      throw new CliError(
        `DATABASE_URL is not set: export DATABASE_URL=postgres://user:password@127.0.0.1:5432/app (without it kiln opens embedded Postgres in ${pgliteDir(target.url)}, which needs npm install @electric-sql/pglite)`,
        { cause: error },
      )
    }
    throw new CliError(`Could not open ${target.description}: ${reason(error)}`, { cause: error })
  }
  try {
    await database.ping()
  } catch (error) {
    await database.close().catch(() => {})
    throw new CliError(
      target.unreachable ?? `Could not reach ${target.description}: ${reason(error)}`,
      {
        cause: error,
      },
    )
  }
  return {
    database,
    kilnConfig: config,
    root,
    source: target.source,
    description: target.description,
    close: () => database.close(),
  }
}

interface Target {
  url: string
  source: AppDatabaseSource
  description: string
  poolMax?: number
  /** The message when the database does not answer, if more specific than the default. */
  unreachable?: string
}

async function resolveTarget(
  config: KilnConfig,
  root: string,
  cwd: string,
  envUrl: string | undefined,
): Promise<Target> {
  if (envUrl !== undefined) {
    checkDialect(envUrl, config, 'DATABASE_URL')
    const url = absoluteUrl(envUrl, cwd)
    return { url, source: 'DATABASE_URL', description: `DATABASE_URL (${describeUrl(url)})` }
  }
  if (config.databaseUrl !== undefined) {
    if (databaseUrlKind(config.databaseUrl) === undefined) {
      throw new CliError(`kiln.config.ts databaseUrl is not a database URL: ${DATABASE_URL_FORMS}`)
    }
    checkDialect(config.databaseUrl, config, 'kiln.config.ts databaseUrl')
    const url = absoluteUrl(config.databaseUrl, root)
    return { url, source: 'kiln.config.ts', description: `${describeUrl(url)} (kiln.config.ts)` }
  }
  if (config.dialect === 'sqlite') {
    const file = join(root, 'storage', 'app.db')
    return { url: `sqlite:${file}`, source: 'embedded', description: `SQLite ${file}` }
  }
  const shared = readSharedDatabase(root)
  if (shared) {
    return {
      url: shared.url,
      source: 'shared-pglite',
      poolMax: 1,
      description: `the running app's embedded database (pid ${shared.pid})`,
      unreachable: `The app running as pid ${shared.pid} holds the embedded database, but its socket (${describeUrl(shared.url)}) does not answer: stop \`npm start\` and retry, or set DATABASE_URL`,
    }
  }
  const dir = join(root, 'storage', 'pgdata')
  return { url: `pglite:${dir}`, source: 'embedded', description: `embedded PGlite in ${dir}` }
}

function checkDialect(url: string, config: KilnConfig, origin: string): void {
  const dialect = databaseUrlDialect(url)
  if (dialect !== config.dialect) {
    throw new CliError(
      `${origin} names a ${dialect === 'sqlite' ? 'SQLite' : 'Postgres'} database, but kiln.config.ts says dialect '${config.dialect}'`,
    )
  }
}

/** Resolves the relative path in a sqlite:/file:/pglite: URL against `base`. */
function absoluteUrl(url: string, base: string): string {
  const kind = databaseUrlKind(url)
  if (kind === 'sqlite') {
    const path = sqlitePath(url)
    return path === ':memory:' || isAbsolute(path) ? url : `sqlite:${resolve(base, path)}`
  }
  if (kind === 'pglite') {
    const dir = pgliteDir(url)
    return dir === undefined || isAbsolute(dir) ? url : `pglite:${resolve(base, dir)}`
  }
  return url
}

/** A URL for messages: host, port and database of a server, never its credentials. */
function describeUrl(url: string): string {
  if (databaseUrlKind(url) !== 'postgres') return url
  const parsed = new URL(url)
  return `postgres://${parsed.host}${parsed.pathname}`
}

/** The innermost cause's first line: a driver error rather than the query wrapper around it. */
function reason(error: unknown): string {
  let current = error
  while (current instanceof Error && current.cause instanceof Error) current = current.cause
  const code = (current as { code?: unknown } | undefined)?.code
  return firstLineOf(current) || (typeof code === 'string' ? code : 'unknown error')
}

interface SharedDatabase {
  url: string
  pid: number
}

/**
 * The running app's shared database, from `storage/kiln-db.json`, when the process that wrote
 * it is alive. A stale (dead pid) or unreadable file is ignored.
 */
function readSharedDatabase(root: string): SharedDatabase | undefined {
  const file = join(root, SHARED_DATABASE_FILE)
  if (!existsSync(file)) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'))
  } catch {
    return undefined
  }
  const { url, pid } = (parsed ?? {}) as { url?: unknown; pid?: unknown }
  if (typeof url !== 'string' || typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) {
    return undefined
  }
  if (databaseUrlKind(url) !== 'postgres' || !isLoopback(url)) return undefined
  return isAlive(pid) ? { url, pid } : undefined
}

function isLoopback(url: string): boolean {
  const host = new URL(url).hostname
  return host === '127.0.0.1' || host === 'localhost' || host === '[::1]'
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
