import { existsSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { isExcludedField } from '../../../api/rest/resources.ts'
import { isCredentialField } from '../../../core/credentials.ts'
import type { ColumnInfo } from '../../../db/models/columns.ts'
import type { ModelInfo } from '../../../db/models/registry.ts'
import { apiKeysTemplate, moduleIndexTemplate, routesTemplate } from './app-templates.ts'
import { controllerTemplate } from './controller-template.ts'
import { withHeader } from './generated-header.ts'
import { relationsOf } from './list-query.ts'
import { apiKeysMigration, planApiKeysMigration } from './migration.ts'
import { modelNames } from './names.ts'
import type { ModelTemplateInput, TemplateContext } from './template-input.ts'
import { requestTemplate, resourceTemplate } from './templates.ts'

export interface ApiScaffoldOptions {
  dialect: 'postgres' | 'sqlite'
  /** The models to generate, already chosen. */
  models: ModelInfo[]
  /**
   * Every model of the schema the API may relate to (kiln's own tables left out): a model
   * generated alone still gets its relations to all of them. `models` when not given.
   */
  schemaModels?: ModelInfo[]
  /** Absolute folder of the generated API (kiln.config `out`). */
  outDir: string
  /** Absolute path of the schema module. */
  schemaFile: string
  /** Absolute folder of the app's migrations; none: no api_keys migration is written. */
  migrationsDir: string | undefined
  /** drizzle-kit writes into the migrations folder too (its journal or its config says so). */
  drizzleKit?: boolean
  /** The time recorded in drizzle-kit's journal; now by default. */
  now?: number
  /** Extra fields to leave out of resources. */
  exclude?: string[]
  /** Turn the automatic exclusion off: credentials are shown and writable as they are. */
  includeAll?: boolean
  /**
   * Columns caught by the wider credential net (`looksLikeCredential`) that are shown and
   * writable all the same, one by one: `table.column`, or `column` for every model.
   */
  expose?: readonly string[]
}

/**
 * A column the wider credential net catches (`isCredentialField`: `*password*`, `*_token`,
 * `*secret*`, …) that is not one of the specification's eight names, which keep their own rule
 * (`--include-all`). `make:api` hides such a column unless the developer exposes it.
 */
export function looksLikeCredential(column: Pick<ColumnInfo, 'name' | 'key'>): boolean {
  const names = [column.name, column.key]
  return !isExcludedField(names) && isCredentialField(names)
}

/** Whether `expose` names this column of this model (`table.column` or `column`). */
export function isExposed(
  model: Pick<ModelInfo, 'tableName'>,
  column: Pick<ColumnInfo, 'name' | 'key'>,
  expose: readonly string[] = [],
): boolean {
  return expose.some((entry) => {
    const dot = entry.lastIndexOf('.')
    const table = dot === -1 ? undefined : entry.slice(0, dot)
    const name = entry.slice(dot + 1)
    return (
      (table === undefined || table === model.tableName) && [column.name, column.key].includes(name)
    )
  })
}

export interface PlannedFile {
  /** Absolute path. */
  path: string
  contents: string
  /** The file is already there: it is skipped, never overwritten. */
  exists: boolean
}

export interface ApiScaffold {
  files: PlannedFile[]
  models: ModelTemplateInput[]
  /** The schema's other models, with their relations (to the generated ones among them). */
  others: ModelTemplateInput[]
  /** drizzle-kit's existing journal with the new api_keys migration recorded in it. */
  journalEdit?: { path: string; contents: string }
  context: TemplateContext
}

/** Password columns, in the order one is chosen to receive the hashed `password` input. */
const PASSWORD_COLUMNS = ['password_hash', 'hashed_password', 'password']

/**
 * What one model's files are made of: the columns its resource shows, and the request fields.
 * Credentials (the automatic exclusion list) are never request fields unless `includeAll`:
 * a password column instead takes a `password` input that the app's hasher turns into it.
 * Primary keys are never updated, and are only given on create when the database has no default.
 */
export function modelTemplateInput(
  model: ModelInfo,
  options: Pick<ApiScaffoldOptions, 'exclude' | 'includeAll' | 'expose'>,
): ModelTemplateInput {
  const names = (column: ColumnInfo) => [column.name, column.key]
  // The wider net: hidden from resources and requests unless exposed one by one.
  const hiddenCredential = (column: ColumnInfo) =>
    looksLikeCredential(column) && !isExposed(model, column, options.expose)
  const hiddenFromResource = (column: ColumnInfo) =>
    hiddenCredential(column) ||
    isExcludedField(names(column), { exclude: options.exclude, includeAll: options.includeAll })
  const credential = (column: ColumnInfo) =>
    hiddenCredential(column) || (!options.includeAll && isExcludedField(names(column)))
  const credentials = model.columns.filter(credential)
  // A required column first: it is the one a login reads.
  const passwordColumn = PASSWORD_COLUMNS.map((name) =>
    credentials.find((column) => column.name.toLowerCase() === name),
  )
    .filter((column) => column !== undefined)
    .sort((a, b) => Number(a.nullable) - Number(b.nullable))[0]
  const writable = model.writableFields.filter((column) => !credential(column))
  return {
    model,
    names: modelNames(model),
    shown: model.columns.filter((column) => !hiddenFromResource(column)),
    hidden: model.columns.filter(hiddenFromResource),
    createFields: writable.filter((column) => !(column.primaryKey && column.hasDefault)),
    updateFields: writable.filter((column) => !column.primaryKey),
    passwordColumn,
  }
}

/** Every file `make:api` would write for these models, with whether each already exists. */
export function planApiScaffold(options: ApiScaffoldOptions): ApiScaffold {
  const { outDir } = options
  const context: TemplateContext = {
    dialect: options.dialect,
    schemaImport: importSpecifier(join(outDir, 'controllers'), options.schemaFile),
  }
  const models = options.models.map((model) => modelTemplateInput(model, options))
  const others = (options.schemaModels ?? [])
    .filter((model) => model.primaryKey && !options.models.includes(model))
    .map((model) => modelTemplateInput(model, options))
  const everyModel = [...models, ...others]
  for (const input of everyModel) input.relations = relationsOf(input, everyModel)
  const files: Array<{ path: string; contents: string }> = []
  for (const input of models) {
    const { names } = input
    files.push(
      {
        path: join(outDir, 'controllers', `${names.pluralFile}.ts`),
        contents: controllerTemplate(input, context),
      },
      {
        path: join(outDir, 'resources', `${names.singularFile}.ts`),
        contents: resourceTemplate(input, context),
      },
      {
        path: join(outDir, 'requests', `${names.singularFile}.ts`),
        contents: requestTemplate(input, context),
      },
    )
  }
  files.push(
    { path: join(outDir, 'index.ts'), contents: moduleIndexTemplate({ models }) },
    { path: join(outDir, 'routes.ts'), contents: routesTemplate({ models }, context) },
    { path: join(outDir, 'api-keys.ts'), contents: apiKeysTemplate(context) },
  )
  const migration =
    options.migrationsDir === undefined
      ? undefined
      : planApiKeysMigration(options.migrationsDir, {
          dialect: options.dialect,
          drizzleKit: options.drizzleKit ?? false,
          now: options.now ?? Date.now(),
        })
  if (migration) files.push({ path: migration.path, contents: apiKeysMigration(options.dialect) })
  const journal = migration?.journal
  if (journal) files.push(journal)
  return {
    // Each TypeScript file carries the header `make:api --upgrade` reads (generated-header.ts).
    files: files.map(({ path, contents }) => ({
      path,
      contents: path.endsWith('.ts') ? withHeader(contents) : contents,
      exists: existsSync(path),
    })),
    models,
    others,
    ...(journal?.exists ? { journalEdit: journal } : {}),
    context,
  }
}

/**
 * A relative import specifier from a folder to a module file, with the extension the compiled
 * module will have (`../../schema.js` for `schema.ts`): it resolves under both
 * `moduleResolution: nodenext` and `bundler` without `allowImportingTsExtensions`.
 */
export function importSpecifier(fromDir: string, file: string): string {
  const path = relative(fromDir, file)
    .split(sep)
    .join('/')
    .replace(/\.ts$/, '.js')
    .replace(/\.mts$/, '.mjs')
    .replace(/\.cts$/, '.cjs')
  return path.startsWith('.') ? path : `./${path}`
}
