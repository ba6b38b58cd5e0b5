import { relative, resolve } from 'node:path'
import type { Command } from 'commander'
import pc from 'picocolors'
import {
  type ApiKeyEnv,
  type ApiKeyInsertValues,
  apiKeyInsertSnippet,
  apiKeyInsertSql,
  generateApiKey,
} from '../../api/keys/index.ts'
import { insertKeyRow } from '../../api/provider/key-store.ts'
import { apiKeyOptionsProblem, scopesColumn } from '../../api/provider/management.ts'
import { type Clock, systemClock } from '../../core/clock.ts'
import type { Env } from '../../core/config/index.ts'
import { databaseUrlDialect } from '../../db/database.ts'
import type { Dialect } from '../../db/index.ts'
import { openAppDatabase } from '../app-context.ts'
import { CliError } from '../cli-error.ts'
import { knownScopes, unknownScopes } from '../known-scopes.ts'
import { loadKilnConfig } from '../models/load.ts'
import { apiKeyCommandError, formatTime } from './api-key-shared.ts'

export interface MakeApiKeyOptions {
  env?: string
  /** Comma-separated scopes. */
  scopes?: string
  /** `30d`, `12h`, `90m`, `2w`, `1y`, or a date (`2027-01-31`, ISO 8601). */
  expires?: string
  /** Insert the record into the app's database instead of printing SQL for it. */
  save?: boolean
  /** `postgres` or `sqlite`, instead of the app's configured dialect. */
  dialect?: string
  cwd?: string
  processEnv?: Env
  clock?: Clock
  print?: (line: string) => void
}

export interface MadeApiKey {
  rawKey: string
  prefix: string
  hashedKey: string
  dialect: Dialect
  sql: string
  /** The new row's id, with `--save`. */
  id?: number
}

const UNIT_MS: Record<string, number> = {
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
  y: 365 * 86_400_000,
}

/** `30d` → now + 30 days; an ISO date or date-time as given. Must lie in the future. */
export function parseExpiry(value: string, now: number): Date {
  const relative = /^(\d{1,6})([mhdwy])$/.exec(value.trim())
  let date: Date
  if (relative?.[1] && relative[2]) {
    date = new Date(now + Number(relative[1]) * (UNIT_MS[relative[2]] ?? 0))
  } else if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value.trim())) {
    date = new Date(value.trim())
  } else {
    throw new CliError(
      `--expires ${JSON.stringify(value)}: use a duration like 30d, 12h, 90m, 2w or 1y, or a date like 2027-01-31`,
    )
  }
  if (Number.isNaN(date.getTime()))
    throw new CliError(`--expires ${JSON.stringify(value)} is not a valid date`)
  if (date.getTime() <= now)
    throw new CliError(`--expires ${JSON.stringify(value)} is not in the future`)
  return date
}

/**
 * `--scopes a,b` as a list. Without the option a key gets `*`: every generated route needs a
 * `<resource>:read` or `<resource>:write` scope, so a key without scopes could call none.
 */
export function parseScopesOption(value: string | undefined): string[] {
  if (value === undefined) return ['*']
  return [
    ...new Set(
      value
        .split(',')
        .map((scope) => scope.trim())
        .filter(Boolean),
    ),
  ]
}

/**
 * `kilnjs make:api-key <name>`: mints a key and prints it once with its prefix, its hash, a
 * ready-to-run SQL INSERT for the app's dialect and a Drizzle snippet; with `--save` it
 * inserts the record into the app's database instead.
 */
export async function runMakeApiKey(
  name: string,
  options: MakeApiKeyOptions = {},
): Promise<MadeApiKey> {
  const print = options.print ?? ((line: string) => console.log(line))
  const clock = options.clock ?? systemClock
  const env = (options.env ?? 'live') as ApiKeyEnv
  if (env !== 'live' && env !== 'test') {
    throw new CliError(`--env must be live or test, not ${JSON.stringify(options.env)}`)
  }
  const scopes = parseScopesOption(options.scopes)
  const now = clock.now()
  const expiresAt = options.expires === undefined ? null : parseExpiry(options.expires, now)
  const problem = apiKeyOptionsProblem({ name, scopes, expiresAt })
  if (problem) throw new CliError(`Cannot make the key: ${problem}`)

  const key = generateApiKey(env)
  const values: ApiKeyInsertValues = {
    name,
    prefix: key.prefix,
    hashedKey: key.hashedKey,
    scopes: scopesColumn(scopes),
    expiresAt,
    createdAt: new Date(now),
  }
  const saved = options.save ? await saveKey(options, values) : undefined
  const dialect = saved?.dialect ?? (await configuredDialect(options))
  const id = saved?.id
  const where = saved?.where ?? ''
  const sql = apiKeyInsertSql(dialect, values)

  print(`${pc.bold(`API key ${JSON.stringify(name)}`)} (${env})`)
  print('')
  print(`  Key:         ${pc.green(key.rawKey)}`)
  print(pc.yellow('               Shown once: store it now. kiln keeps only its hash.'))
  print(`  Prefix:      ${key.prefix}`)
  print(`  Hashed key:  ${key.hashedKey}`)
  print(`  Scopes:      ${scopesLine(options.scopes, scopes)}`)
  print(`  Expires:     ${expiresAt ? formatTime(expiresAt) : 'never'}`)
  print('')
  const unused = await scopesNoRouteRequires(scopes, options.cwd)
  if (unused) {
    const list = unused.scopes.join(', ')
    print(pc.yellow(`! No route of the API in ${unused.apiDir} requires ${list}.`))
    print(pc.yellow(`  Known scopes: ${unused.known.join(', ')}`))
    print('')
  }
  if (id !== undefined) {
    print(`${pc.green('✓')} Saved as API key ${id} in ${where}`)
  } else {
    print(pc.bold(`SQL (${dialect === 'postgres' ? 'PostgreSQL' : 'SQLite'}):`))
    print(sql)
    print('')
    print(pc.bold('TypeScript (Drizzle):'))
    print(apiKeyInsertSnippet(dialect, values))
    print('')
    print(pc.dim('Or run again with --save to insert it into the app database.'))
  }
  return { ...key, dialect, sql, ...(id === undefined ? {} : { id }) }
}

/** `--save`: the key's row inserted into the app's database. */
async function saveKey(options: MakeApiKeyOptions, values: ApiKeyInsertValues) {
  const app = await openAppDatabase({ cwd: options.cwd, env: options.processEnv })
  try {
    const dialect: Dialect = app.database.dialect
    const { id } = await insertKeyRow(app.database, values)
    return { dialect, id, where: app.description }
  } catch (error) {
    throw apiKeyCommandError(error, app.description)
  } finally {
    await app.close()
  }
}

function scopesLine(given: string | undefined, scopes: string[]): string {
  if (given === undefined) return '* (every scope; narrow it with --scopes posts:read,posts:write)'
  return scopes.length > 0 ? scopes.join(', ') : 'none (only routes that need just a valid key)'
}

/**
 * The given scopes that no route of the app's generated API requires (a typo such as
 * `tool:read` for `tools:read`): the key is still made, with a warning naming the known ones.
 */
async function scopesNoRouteRequires(
  scopes: string[],
  cwd: string | undefined,
): Promise<{ scopes: string[]; known: string[]; apiDir: string } | undefined> {
  let apiDir: string
  try {
    const { config, root } = await loadKilnConfig(cwd)
    apiDir = resolve(root, config.out)
  } catch {
    return undefined // no kiln.config.ts (a key made with --dialect): nothing to compare with
  }
  const known = knownScopes(apiDir)
  if (known === undefined) return undefined
  const unknown = unknownScopes(scopes, known)
  if (unknown.length === 0) return undefined
  return { scopes: unknown, known, apiDir: relative(process.cwd(), apiDir) || apiDir }
}

async function configuredDialect(options: MakeApiKeyOptions): Promise<Dialect> {
  if (options.dialect !== undefined) {
    if (options.dialect !== 'postgres' && options.dialect !== 'sqlite') {
      throw new CliError(
        `--dialect must be postgres or sqlite, not ${JSON.stringify(options.dialect)}`,
      )
    }
    return options.dialect
  }
  try {
    return (await loadKilnConfig(options.cwd)).config.dialect
  } catch (error) {
    const url = (options.processEnv ?? process.env).DATABASE_URL
    const fromUrl = url ? databaseUrlDialect(url) : undefined
    if (fromUrl) return fromUrl
    throw error
  }
}

export function register(program: Command): void {
  program
    .command('make:api-key')
    .description('Mint an API key: prints it once, with SQL and code that store its record')
    .argument('<name>', 'a label for the key, e.g. ci-bot')
    .option('--env <env>', 'live or test', 'live')
    .option('--scopes <scopes>', 'comma-separated scopes, e.g. posts:read,posts:write (* = all)')
    .option('--expires <when>', 'a duration (30d, 12h, 2w, 1y) or a date (2027-01-31)')
    .option('--dialect <dialect>', "postgres or sqlite (default: the app's)")
    .option('--save', "insert the record into the app's database")
    .action(async (name: string, options: MakeApiKeyOptions) => {
      await runMakeApiKey(name, options)
    })
}
