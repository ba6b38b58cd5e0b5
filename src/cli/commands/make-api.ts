import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative, resolve, sep } from 'node:path'
import type { Command } from 'commander'
import pc from 'picocolors'
import type { ModelInfo } from '../../db/index.ts'
import { CliError } from '../cli-error.ts'
import { type PlannedFile, printFiles } from '../file-listing.ts'
import { loadKilnConfig, loadModelRegistry } from '../models/load.ts'
import {
  addModelsToIndex,
  addModelsToRoutes,
  type ModuleEdit,
} from '../scaffold/api/existing-api.ts'
import { restamp } from '../scaffold/api/generated-header.ts'
import { jsonColumnsTypedOnlyByType, typedJsonHint } from '../scaffold/api/json-type-hints.ts'
import { apiKeysMigrationDir, isDrizzleKitFolder } from '../scaffold/api/migration.ts'
import { modelNames } from '../scaffold/api/names.ts'
import { printNewRelations } from '../scaffold/api/new-relations.ts'
import {
  type ApiScaffold,
  isExposed,
  looksLikeCredential,
  planApiScaffold,
} from '../scaffold/api/plan.ts'
import type { ModelTemplateInput } from '../scaffold/api/template-input.ts'
import { printWiring } from './make-api-next-steps.ts'
import { upgradeApi } from './make-api-upgrade.ts'
import { askYesNo, closePromptInput } from './prompts.ts'

export interface MakeApiOptions {
  /** Model names (`Post`), resources (`posts`) or table names. */
  models?: string[]
  all?: boolean
  /** Write without asking. */
  yes?: boolean
  /** Extra fields left out of every resource. */
  exclude?: string[]
  /** Turn the automatic exclusion of credential fields off (shown and writable as they are). */
  includeAll?: boolean
  /**
   * Columns that look like credentials (`*_token`, `*secret*`, …) to show and accept all the
   * same, one by one: `table.column`, or `column` for every model. Without `yes`, each other
   * such column is asked about.
   */
  expose?: string[]
  /**
   * Rewrite the generated files no one edited since `make:api` wrote them (their header's hash
   * still matches) with this kiln's version; list the edited ones, and those kiln 0.1 wrote
   * (no header), with what to change. Writes no new file.
   */
  upgrade?: boolean
  /** Where the API goes, instead of kiln.config.ts `out` (relative to the app root). */
  out?: string
  /** The migrations folder, instead of kiln.config.ts `migrations`. */
  migrations?: string
  /** The app's folder (holding kiln.config.ts); the current folder by default. */
  cwd?: string
  print?: (line: string) => void
  /**
   * Asks a yes/no question (each credential-looking column, then whether to write): the
   * terminal prompt by default, or one line per answer from piped standard input.
   */
  confirm?: (message: string, fallback?: boolean) => Promise<boolean>
}

export interface MakeApiResult {
  written: string[]
  skipped: string[]
}

/** kiln's own tables: never part of `--all`, whatever the schema module re-exports. */
const LIBRARY_TABLES = new Set(['api_keys', 'oauth_clients'])

/**
 * `kilnjs make:api`: writes controllers, resources and requests for the chosen models and,
 * once per app, the module index, routes, api-keys binding and migration. Existing files are
 * skipped, never overwritten.
 */
export async function runMakeApi(options: MakeApiOptions): Promise<MakeApiResult> {
  try {
    return await makeApi(options)
  } finally {
    closePromptInput()
  }
}

async function makeApi(options: MakeApiOptions): Promise<MakeApiResult> {
  const print = options.print ?? ((line: string) => console.log(line))
  const loaded = await loadKilnConfig(options.cwd)
  const { config, root } = loaded
  const registry = await loadModelRegistry(loaded)
  const models = chooseModels(registry.models, options, (name) => registry.get(name))
  const schemaModels = registry.models.filter((m) => !LIBRARY_TABLES.has(m.tableName))
  const outDir = resolve(root, options.out ?? config.out)
  const schemaFile = resolve(root, config.schema)
  const migrationsDir = apiKeysMigrationDir(root, options.migrations ?? config.migrations)
  // A controller that exists is left as it is: nothing to ask about its model.
  const fresh = models.filter(
    (model) => !existsSync(join(outDir, 'controllers', `${modelNames(model).pluralFile}.ts`)),
  )
  const expose = await chooseExposed(fresh, options, print)
  const scaffold = planApiScaffold({
    dialect: config.dialect,
    models,
    schemaModels,
    outDir,
    schemaFile,
    migrationsDir,
    drizzleKit: migrationsDir !== undefined && isDrizzleKitFolder(root, migrationsDir),
    exclude: options.exclude,
    includeAll: options.includeAll,
    expose,
  })
  const { files } = scaffold

  const show = (path: string) => relative(process.cwd(), path) || path
  if (options.upgrade) return upgradeApi(files, print, show)
  const edits = existingModuleEdits(scaffold)
  const toWrite = files.filter((file) => !file.exists)
  print(`make:api: ${models.map((m) => m.name).join(', ')} (${config.dialect})`)
  const updates = [...edits].filter(
    ([path, edit]) => edit.contents !== undefined && edit.contents !== readFileSync(path, 'utf8'),
  )
  const updated = new Set(updates.map(([path]) => path))
  const listing = files.map((file) => ({
    path: file.path,
    action: !file.exists ? 'create' : updated.has(file.path) ? 'update' : 'skip',
  })) satisfies PlannedFile[]
  if (toWrite.length === 0 && updates.length === 0) {
    printFiles(print, listing, show, true)
    print('Nothing to write: every file exists.')
    return { written: [], skipped: files.map((f) => f.path) }
  }
  if (!options.yes) {
    printFiles(print, listing, show, false)
    const ask = options.confirm ?? askYesNo
    if (!(await ask(`Write ${toWrite.length + updates.length} file(s)?`, true))) {
      print('Nothing written.')
      return { written: [], skipped: files.map((f) => f.path) }
    }
  }
  writeScaffold(toWrite, updates)
  if (options.yes) printFiles(print, listing, show, true)
  else print(`Wrote ${toWrite.length + updates.length} file(s).`)
  const leftAlone = files.filter((f) => f.exists && !updated.has(f.path)).map((f) => f.path)
  printLeftAlone(print, leftAlone, edits, show)
  printWarnings(print, scaffold.models, options)
  const untyped = typedJsonHint(jsonColumnsTypedOnlyByType(models, schemaFile), config.dialect)
  if (untyped) print(pc.cyan(untyped))
  printNewRelations(print, scaffold, outDir, show)
  printWiring(print, {
    firstApi: !files.some((file) => file.path === join(outDir, 'api-keys.ts') && file.exists),
    models: scaffold.models,
    outDir,
    root,
    migrationsDir,
    configMigrations: config.migrations,
    dialect: config.dialect,
    appName: packageName(root),
  })
  return {
    written: [...toWrite.map((f) => f.path), ...updates.map(([path]) => path)],
    skipped: leftAlone,
  }
}

/** New files (never over one: `wx`), and the in-place additions, restamped. */
function writeScaffold(
  toWrite: Array<{ path: string; contents: string }>,
  updates: Array<[string, ModuleEdit]>,
): void {
  for (const file of toWrite) {
    mkdirSync(dirname(file.path), { recursive: true })
    writeFileSync(file.path, file.contents, { flag: 'wx' })
  }
  for (const [path, edit] of updates) {
    writeFileSync(path, restamp(readFileSync(path, 'utf8'), edit.contents!))
  }
}

/** The files left as they are, and the lines to add by hand to the files changed by hand. */
function printLeftAlone(
  print: (line: string) => void,
  leftAlone: string[],
  edits: Map<string, ModuleEdit>,
  show: (path: string) => string,
): void {
  for (const path of leftAlone) print(pc.cyan(`ℹ ${show(path)} exists: left as it is`))
  for (const [path, edit] of edits) {
    if (edit.manual.length === 0) continue
    print(pc.yellow(`! ${show(path)} was changed by hand: add these lines to it yourself:`))
    for (const line of edit.manual.flatMap((l) => l.split('\n'))) print(pc.dim(`    ${line}`))
  }
}

/** The in-place additions to an existing routes.ts and index.ts for the chosen models. */
function existingModuleEdits(scaffold: ApiScaffold): Map<string, ModuleEdit> {
  const edits = new Map<string, ModuleEdit>()
  const journal = scaffold.journalEdit
  if (journal) edits.set(journal.path, { contents: journal.contents, manual: [] })
  for (const file of scaffold.files.filter((f) => f.exists)) {
    const source = readFileSync(file.path, 'utf8')
    if (file.path.endsWith(`${sep}routes.ts`)) {
      edits.set(file.path, addModelsToRoutes(source, scaffold.models, scaffold.context))
    } else if (file.path.endsWith(`${sep}index.ts`) && !file.path.includes(`${sep}controllers`)) {
      edits.set(file.path, addModelsToIndex(source, scaffold.models))
    }
  }
  return edits
}

/** What the generated code does not do by itself and the developer should know. */
function printWarnings(
  print: (line: string) => void,
  models: ModelTemplateInput[],
  options: MakeApiOptions,
): void {
  if (options.includeAll) {
    print(
      pc.yellow(
        '! --include-all: password, secret and token columns are shown in responses and writable as they are. Callers can then set a password hash or a token directly.',
      ),
    )
    return
  }
  for (const { model, createFields, passwordColumn } of models) {
    const required = model.writableFields.filter(
      (column) =>
        !createFields.includes(column) &&
        column !== passwordColumn &&
        !column.nullable &&
        !column.hasDefault &&
        !column.primaryKey,
    )
    for (const column of required) {
      print(
        pc.yellow(
          `! ${model.tableName}.${column.name} is a credential, left out of requests, but the database requires it: give it a default, or set it in the controller's store().`,
        ),
      )
    }
  }
}

/** The models named, or every model of the schema (`--all`): each with a single-column key. */
export function chooseModels(
  all: ModelInfo[],
  options: Pick<MakeApiOptions, 'models' | 'all'>,
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
      `${keyless.map((m) => m.name).join(', ')}: kiln needs a single-column primary key`,
    )
  }
  return chosen
}

/**
 * The columns the wider credential net catches (`looksLikeCredential`: `*password*`,
 * `*_token`, `*secret*`, … beyond the specification's eight names), listed; each is asked about
 * unless `--expose` names it or `--yes` answers for every one (they stay hidden). Returns the
 * exposed ones, as `table.column`.
 */
async function chooseExposed(
  models: ModelInfo[],
  options: MakeApiOptions,
  print: (line: string) => void,
): Promise<string[]> {
  const given = options.expose ?? []
  const excluded = new Set((options.exclude ?? []).map((name) => name.toLowerCase()))
  const candidates = models.flatMap((model) =>
    model.columns
      .filter((column) => looksLikeCredential(column) && !excluded.has(column.name.toLowerCase()))
      .map((column) => ({ model, column, name: `${model.tableName}.${column.name}` })),
  )
  const unknown = given.filter(
    (entry) => !candidates.some(({ model, column }) => isExposed(model, column, [entry])),
  )
  if (unknown.length > 0) {
    throw new CliError(
      `--expose ${unknown.join(', ')}: not a column that looks like a credential of the models to generate` +
        (candidates.length > 0 ? ` (those are ${candidates.map((c) => c.name).join(', ')})` : ''),
    )
  }
  if (candidates.length === 0) return []
  const exposed = candidates.filter(({ model, column }) => isExposed(model, column, given))
  const open = candidates.filter((candidate) => !exposed.includes(candidate))
  if (open.length > 0 && !options.yes) {
    print(
      'These columns look like credentials: hidden from responses, filters and requests unless exposed.',
    )
    const ask = options.confirm ?? askYesNo
    for (const candidate of open) {
      if (await ask(`Expose ${candidate.name}?`)) exposed.push(candidate)
    }
  }
  const hidden = candidates.filter((candidate) => !exposed.includes(candidate))
  if (hidden.length > 0) {
    print(
      pc.cyan(
        `ℹ Hidden as credentials: ${hidden.map((c) => c.name).join(', ')} (make:api --expose ${hidden[0]!.name} shows one)`,
      ),
    )
  }
  if (exposed.length > 0) {
    print(
      pc.yellow(
        `! Exposed although they look like credentials: ${exposed.map((c) => c.name).join(', ')}`,
      ),
    )
  }
  return exposed.map((candidate) => candidate.name)
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
    .option(
      '--expose <fields>',
      'comma-separated columns that look like credentials to show all the same (table.column)',
      list,
    )
    .option(
      '--include-all',
      'show and accept password/secret/token fields as they are (unsafe: callers can set hashes)',
    )
    .option('--upgrade', 'rewrite the generated files no one edited; list the edited ones')
    .option('--out <dir>', 'where to write the API (default: kiln.config.ts out)')
    .option('--migrations <dir>', 'the migrations folder (default: kiln.config.ts migrations)')
    .action(async (models: string[], flags: Omit<MakeApiOptions, 'models'>) => {
      await runMakeApi({ ...flags, models })
    })
}

/** The app's package name (its docs' title), or its folder's name. */
function packageName(root: string): string {
  const file = join(root, 'package.json')
  const name = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name
    : undefined
  return typeof name === 'string' ? name : basename(root)
}
