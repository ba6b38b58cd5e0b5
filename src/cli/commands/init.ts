import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative, resolve } from 'node:path'
import type { Command } from 'commander'
import pc from 'picocolors'
import type { Dialect } from '../../db/database.ts'
import { CliError } from '../cli-error.ts'
import { printFiles } from '../file-listing.ts'
import { loadModelRegistry } from '../models/load.ts'
import { importSpecifier, modelTemplateInput } from '../scaffold/api/plan.ts'
import { entryWiring } from '../scaffold/existing-entry.ts'
import { missingPackages, nextSteps } from '../scaffold/init/next-steps.ts'
import {
  drizzleConfigTemplate,
  KILN_TABLES_FILTER,
  kilnConfigTemplate,
  mainTemplate,
} from '../scaffold/init/templates.ts'
import { askYesNo, closePromptInput } from './prompts.ts'

export interface InitOptions {
  dialect?: Dialect
  /** The module exporting the app's Drizzle tables, relative to the app root. */
  schema?: string
  /** Where `make:api` will write (default: `api` beside the schema's top folder). */
  out?: string
  /** The app's migrations folder, shared with drizzle-kit (default `drizzle`). */
  migrations?: string
  /** Write a minimal entry point there (never over an existing file). */
  main?: string
  yes?: boolean
  cwd?: string
  /** The environment (`DATABASE_URL` already set: no step to export it); `process.env` by default. */
  env?: Record<string, string | undefined>
  print?: (line: string) => void
  confirm?: (message: string, fallback?: boolean) => Promise<boolean>
}

export interface InitResult {
  written: string[]
  dialect: Dialect
}

const KILN_CONFIGS = ['kiln.config.ts', 'kiln.config.mts', 'kiln.config.js', 'kiln.config.mjs']
const DRIZZLE_CONFIGS = [
  'drizzle.config.ts',
  'drizzle.config.mts',
  'drizzle.config.js',
  'drizzle.config.mjs',
  'drizzle.config.json',
]
const SCHEMA_GUESSES = [
  'src/db/schema.ts',
  'src/schema.ts',
  'src/db/schema/index.ts',
  'db/schema.ts',
  'schema.ts',
]

/**
 * `kilnjs init`: prepares an existing Hono + Drizzle app for kiln. Writes kiln.config.ts and a
 * drizzle-kit config that leaves kiln's tables alone, prints (or, with `--main`, writes) an
 * entry point, and the exact commands that follow. Never overwrites a file.
 */
export async function runInit(options: InitOptions = {}): Promise<InitResult> {
  const print = options.print ?? ((line: string) => console.log(line))
  const root = resolve(options.cwd ?? process.cwd())
  const pkg = readPackageJson(root)
  const drizzleConfig = DRIZZLE_CONFIGS.map((name) => join(root, name)).find(existsSync)
  const drizzleText = drizzleConfig ? readFileSync(drizzleConfig, 'utf8') : ''
  const dialect = options.dialect ?? guessDialect(pkg, drizzleText)
  const schema = options.schema ?? configValue(drizzleText, 'schema') ?? guessSchema(root)
  if (!existsSync(resolve(root, schema))) {
    throw new CliError(
      `Schema module not found: ${schema}. Pass --schema <file exporting your Drizzle tables>`,
    )
  }
  const top = schema.replace(/^\.\//, '').split('/')[0]
  const out = options.out ?? (top === 'src' ? 'src/api' : 'api')
  const migrations = options.migrations ?? configValue(drizzleText, 'out') ?? 'drizzle'
  const input = { dialect, schema, out, migrations }
  const written: string[] = []

  const plan: Array<{ path: string; contents: string }> = []
  const kilnConfig = KILN_CONFIGS.map((name) => join(root, name)).find(existsSync)
  if (kilnConfig) print(pc.dim(`  skip   ${basename(kilnConfig)} (exists)`))
  else plan.push({ path: join(root, 'kiln.config.ts'), contents: kilnConfigTemplate(input) })
  if (drizzleConfig) print(pc.dim(`  skip   ${basename(drizzleConfig)} (exists)`))
  else plan.push({ path: join(root, 'drizzle.config.ts'), contents: drizzleConfigTemplate(input) })
  const mainFile = options.main === undefined ? undefined : resolve(root, options.main)
  const passwordModels = await modelsWithPasswords(root, input, print)
  const appName = typeof pkg.name === 'string' ? pkg.name : basename(root)
  const mainCode = mainTemplate({
    dialect,
    hashesPasswords: passwordModels.length > 0,
    apiImport: importSpecifier(
      dirname(mainFile ?? join(root, top === 'src' ? 'src' : '.', 'main.ts')),
      resolve(root, out, 'index.ts'),
    ).replace(/\.ts$/, '.js'),
    appName,
  })
  if (mainFile && existsSync(mainFile))
    print(pc.dim(`  skip   ${relative(root, mainFile)} (exists)`))
  else if (mainFile) plan.push({ path: mainFile, contents: mainCode })
  const wrote = await writePlan(plan, options, print, root)
  if (!wrote) return { written, dialect }
  written.push(...wrote)

  if (drizzleConfig && !/tablesFilter/.test(drizzleText)) printTablesFilter(drizzleConfig, print)
  const mainPath = mainFile
    ? relative(root, mainFile)
    : join(top === 'src' ? 'src' : '.', 'main.ts')
  if (mainFile && existsSync(mainFile) && !written.includes(mainFile)) {
    // The app's own entry point: the few lines that mount kiln in it, as make:api prints them.
    print('')
    print(pc.bold(`Mount the API in ${mainPath}, after your Hono app and your Drizzle db:`))
    const wiring = entryWiring({
      dialect,
      apiImport: importSpecifier(dirname(mainFile), resolve(root, out, 'index.ts')),
      hashesPasswords: passwordModels.length > 0,
      appName,
    })
    for (const line of wiring) print(pc.dim(`  ${line}`))
  } else if (!mainFile) {
    print('')
    print(
      pc.bold(
        `The entry point (save it as ${mainPath}, or run npx kilnjs init --main ${mainPath}):`,
      ),
    )
    for (const line of mainCode.trimEnd().split('\n')) print(pc.dim(`  ${line}`))
  }
  print('')
  const databaseUrlSet = Boolean((options.env ?? process.env).DATABASE_URL)
  const missing = missingPackages(pkg, dialect)
  for (const line of nextSteps({ dialect, mainPath, missing, databaseUrlSet })) print(line)
  return { written, dialect }
}

/**
 * Lists the files and, unless `--yes`, asks before writing them (never over a file: `wx`).
 * The paths written, or undefined when the person said no.
 */
async function writePlan(
  plan: Array<{ path: string; contents: string }>,
  options: InitOptions,
  print: (line: string) => void,
  root: string,
): Promise<string[] | undefined> {
  const listing = plan.map((file) => ({ path: file.path, action: 'create' as const }))
  const show = (path: string) => relative(root, path)
  if (plan.length > 0 && !options.yes) {
    printFiles(print, listing, show, false)
    const ask = options.confirm ?? askYesNo
    const yes = await ask(`Write ${plan.length} file(s)?`, true).finally(closePromptInput)
    if (!yes) {
      print('Nothing written.')
      return undefined
    }
  }
  const written: string[] = []
  for (const file of plan) {
    mkdirSync(dirname(file.path), { recursive: true })
    writeFileSync(file.path, file.contents, { flag: 'wx' })
    written.push(file.path)
  }
  if (options.yes) printFiles(print, listing, show, true)
  else if (written.length > 0) print(`Wrote ${written.length} file(s).`)
  return written
}

/** The line an existing drizzle-kit config needs so that it leaves kiln's tables alone. */
function printTablesFilter(drizzleConfig: string, print: (line: string) => void): void {
  print('')
  print(
    pc.yellow(
      `Add this line to ${basename(drizzleConfig)} so drizzle-kit leaves kiln's tables alone:`,
    ),
  )
  print(pc.dim(`  tablesFilter: [${KILN_TABLES_FILTER.map((p) => `'${p}'`).join(', ')}],`))
}

/**
 * The models whose generated API hashes a password (as `make:api --all` will plan them): the
 * entry point must then pass `hashPassword`. A schema that cannot load yet (its packages not
 * installed) is reported, and the entry point is written without one.
 */
async function modelsWithPasswords(
  root: string,
  config: { dialect: Dialect; schema: string; out: string; migrations: string },
  print: (line: string) => void,
): Promise<string[]> {
  try {
    const registry = await loadModelRegistry({ config, root, path: join(root, 'kiln.config.ts') })
    return registry.models
      .filter((model) => modelTemplateInput(model, {}).passwordColumn)
      .map((model) => model.name)
  } catch (error) {
    if (!(error instanceof CliError)) throw error
    print(pc.yellow(`! ${error.message}`))
    print(
      pc.yellow(
        '  The entry point below assumes no password column: if make:api finds one, pass hashPassword as it prints.',
      ),
    )
    return []
  }
}

interface PackageJson {
  name?: unknown
  dependencies?: Record<string, string>
  devDependencies?: Record<string, string>
}

function readPackageJson(root: string): PackageJson {
  const file = join(root, 'package.json')
  if (!existsSync(file))
    throw new CliError(`No package.json in ${root}: run kilnjs init from your app's root`)
  return JSON.parse(readFileSync(file, 'utf8')) as PackageJson
}

function guessDialect(pkg: PackageJson, drizzleText: string): Dialect {
  if (/dialect:\s*['"](sqlite|turso)['"]/.test(drizzleText)) return 'sqlite'
  if (/dialect:\s*['"]postgresql['"]/.test(drizzleText)) return 'postgres'
  const deps = { ...pkg.dependencies, ...pkg.devDependencies }
  return 'better-sqlite3' in deps && !('pg' in deps) ? 'sqlite' : 'postgres'
}

/** A string field of a drizzle-kit config (`schema: './src/db/schema.ts'`), when written plainly. */
function configValue(text: string, field: string): string | undefined {
  return new RegExp(`\\b${field}:\\s*['"]([^'"]+)['"]`).exec(text)?.[1]?.replace(/^\.\//, '')
}

function guessSchema(root: string): string {
  const found = SCHEMA_GUESSES.find((path) => existsSync(join(root, path)))
  if (!found) {
    throw new CliError(
      `No schema module found (looked for ${SCHEMA_GUESSES.join(', ')}): pass --schema <file>`,
    )
  }
  return found
}

export function register(program: Command): void {
  program
    .command('init')
    .description(
      'Set up kiln in an existing Hono + Drizzle app: kiln.config.ts, drizzle.config.ts, the entry point',
    )
    .option(
      '--dialect <dialect>',
      'postgres or sqlite (default: from drizzle.config / package.json)',
    )
    .option('--schema <file>', 'the module exporting your Drizzle tables')
    .option('--out <dir>', 'where make:api writes the API (default: src/api)')
    .option(
      '--migrations <dir>',
      'the migrations folder shared with drizzle-kit (default: drizzle)',
    )
    .option('--main <file>', 'write a minimal entry point there (never over an existing file)')
    .option('-y, --yes', 'write without asking for confirmation')
    .action(async (flags: InitOptions) => {
      if (
        flags.dialect !== undefined &&
        flags.dialect !== 'postgres' &&
        flags.dialect !== 'sqlite'
      ) {
        throw new CliError(
          `--dialect must be postgres or sqlite, not ${JSON.stringify(flags.dialect)}`,
        )
      }
      await runInit(flags)
    })
}
