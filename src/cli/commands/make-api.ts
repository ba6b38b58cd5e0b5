import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, relative, resolve } from 'node:path'
import { confirm, isCancel } from '@clack/prompts'
import type { Command } from 'commander'
import pc from 'picocolors'
import { loadKilnConfig, loadModelRegistry, type ModelInfo } from '../../db/index.ts'
import { CliError } from '../cli-error.ts'
import { modelNames } from '../scaffold/api/names.ts'
import { importSpecifier, type PlannedFile, planApiScaffold } from '../scaffold/api/plan.ts'

export interface MakeApiOptions {
  /** Model names (`Post`), resources (`posts`) or table names. */
  models?: string[]
  all?: boolean
  /** Write without asking. */
  yes?: boolean
  /** Extra fields left out of every resource. */
  exclude?: string[]
  /** Turn the automatic exclusion of secret-like fields off. */
  includeAll?: boolean
  /** Where the API goes, instead of kiln.config.ts `out` (relative to the app root). */
  out?: string
  /** The migrations folder, instead of kiln.config.ts `migrations`. */
  migrations?: string
  /** The app's folder (holding kiln.config.ts); the current folder by default. */
  cwd?: string
  print?: (line: string) => void
  /** Asks to go ahead; the terminal prompt by default. */
  confirm?: (message: string) => Promise<boolean>
}

export interface MakeApiResult {
  written: string[]
  skipped: string[]
}

/** kiln's own tables: never part of `--all`, whatever the schema module re-exports. */
const LIBRARY_TABLES = new Set(['api_keys', 'oauth_clients'])

/**
 * `kiln make:api`: writes controllers, resources and requests for the chosen models and,
 * once per app, the module index, routes, api-keys binding and migration. Existing files are
 * skipped, never overwritten.
 */
export async function runMakeApi(options: MakeApiOptions): Promise<MakeApiResult> {
  const print = options.print ?? ((line: string) => console.log(line))
  const loaded = await loadKilnConfig(options.cwd)
  const { config, root } = loaded
  const registry = await loadModelRegistry(loaded)
  const models = chooseModels(registry.models, options, (name) => registry.get(name))
  const outDir = resolve(root, options.out ?? config.out)
  const migrationsDir = resolve(root, options.migrations ?? config.migrations ?? 'migrations')
  const files = planApiScaffold({
    dialect: config.dialect,
    models,
    outDir,
    schemaFile: resolve(root, config.schema),
    migrationsDir,
    exclude: options.exclude,
    includeAll: options.includeAll,
  })

  const show = (path: string) => relative(process.cwd(), path) || path
  const toWrite = files.filter((file) => !file.exists)
  print(`make:api: ${models.map((m) => m.name).join(', ')} (${config.dialect})`)
  for (const file of files) {
    print(
      file.exists ? pc.dim(`  skip   ${show(file.path)} (exists)`) : `  create ${show(file.path)}`,
    )
  }
  if (toWrite.length === 0) {
    print('Nothing to write: every file exists.')
    return { written: [], skipped: files.map((f) => f.path) }
  }
  if (!options.yes) {
    const ask = options.confirm ?? promptConfirm
    if (!(await ask(`Write ${toWrite.length} file(s)?`))) {
      print('Nothing written.')
      return { written: [], skipped: files.map((f) => f.path) }
    }
  }
  for (const file of toWrite) {
    mkdirSync(dirname(file.path), { recursive: true })
    writeFileSync(file.path, file.contents, { flag: 'wx' })
  }
  for (const file of files.filter((f) => f.exists)) {
    print(pc.cyan(`ℹ ${show(file.path)} exists: left as it is`))
  }
  printWiring(print, {
    files,
    models,
    outDir,
    root,
    migrationsDir,
    configMigrations: config.migrations,
  })
  return {
    written: toWrite.map((f) => f.path),
    skipped: files.filter((f) => f.exists).map((f) => f.path),
  }
}

function chooseModels(
  all: ModelInfo[],
  options: MakeApiOptions,
  get: (name: string) => ModelInfo | undefined,
): ModelInfo[] {
  const names = options.models ?? []
  const known = () =>
    all
      .filter((m) => !LIBRARY_TABLES.has(m.tableName))
      .map((m) => m.name)
      .join(', ') || '(none)'
  if (options.all && names.length > 0) throw new CliError('Give model names or --all, not both')
  if (!options.all && names.length === 0) {
    throw new CliError(`Name the models to generate, or pass --all. Models: ${known()}`)
  }
  if (options.all) {
    const chosen = all.filter((m) => !LIBRARY_TABLES.has(m.tableName) && m.primaryKey)
    if (chosen.length === 0) throw new CliError('The schema module exports no tables')
    return chosen
  }
  const unknown = names.filter((name) => !get(name))
  if (unknown.length > 0) {
    throw new CliError(`Unknown model(s): ${unknown.join(', ')}. Known models: ${known()}`)
  }
  const chosen = [...new Set(names.map((name) => get(name)!))]
  const keyless = chosen.filter((m) => !m.primaryKey)
  if (keyless.length > 0) {
    throw new CliError(
      `${keyless.map((m) => m.name).join(', ')}: the API needs a single-column primary key`,
    )
  }
  return chosen
}

async function promptConfirm(message: string): Promise<boolean> {
  if (!process.stdin.isTTY) {
    throw new CliError('Not a terminal: pass --yes to write the files without confirmation')
  }
  const answer = await confirm({ message })
  return !isCancel(answer) && answer === true
}

function printWiring(
  print: (line: string) => void,
  info: {
    files: PlannedFile[]
    models: ModelInfo[]
    outDir: string
    root: string
    migrationsDir: string
    configMigrations: string | undefined
  },
): void {
  const routes = info.files.find((f) => f.path.endsWith('routes.ts'))
  const apiImport = importSpecifier(info.root, resolve(info.outDir, 'index.ts'))
  print('')
  print(pc.bold('Next steps'))
  if (routes?.exists) {
    print(`  0. routes.ts was kept: register the new controllers in apiRoutes() and apiResources:`)
    for (const model of info.models) {
      print(pc.dim(`       .route('/${model.resource}', ${modelNames(model).controller}(context))`))
    }
  }
  print(`  1. Import the generated module (${apiImport}, relative to the app root):`)
  print(pc.dim(`       import { apiKeyProvider, apiRoutes, docsRoutes } from '${apiImport}'`))
  print('  2. Register apiRoutes() in your app:')
  print(pc.dim('       const limiters = createRateLimiters()            // kiln/api'))
  print(pc.dim('       const apiKeys = apiKeyProvider({ database })'))
  print(pc.dim("       app.route('/', apiRoutes({ database, apiKeys, limiters }))"))
  print('  3. Register docsRoutes() (OpenAPI at /api/openapi.json, ReDoc at /api/docs):')
  print(pc.dim("       app.route('/', docsRoutes({ app, title: config.appName }))"))
  print('  4. The ApiKeyProvider is bound in step 2 (apiKeyProvider from api-keys.ts).')
  const setMigrations =
    info.configMigrations === undefined
      ? ` (set migrations: '${relative(info.root, info.migrationsDir)}' in kiln.config.ts)`
      : ''
  print(`  5. Create the api_keys table: npx kiln migrate${setMigrations}`)
  print('  6. Mint the first key: npx kiln make:api-key <name>')
}

function list(value: string): string[] {
  return value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
}

export function register(program: Command): void {
  program
    .command('make:api')
    .description('Generate a CRUD REST API under /api/v1 for models of kiln.config.ts')
    .argument('[models...]', 'model names (Post), resources (posts) or table names')
    .option('--all', 'every model of the schema module')
    .option('-y, --yes', 'write without asking for confirmation')
    .option('--exclude <fields>', 'comma-separated fields to leave out of resources', list)
    .option('--include-all', 'turn off the automatic exclusion of password/secret/token fields')
    .option('--out <dir>', 'where to write the API (default: kiln.config.ts out)')
    .option('--migrations <dir>', 'the migrations folder (default: kiln.config.ts migrations)')
    .action(async (models: string[], flags: Omit<MakeApiOptions, 'models'>) => {
      await runMakeApi({ ...flags, models })
    })
}
