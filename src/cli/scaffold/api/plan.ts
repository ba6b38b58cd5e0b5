import { existsSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { isExcludedField } from '../../../api/rest/resources.ts'
import type { ModelInfo } from '../../../db/models/registry.ts'
import { apiKeysMigration, apiKeysMigrationPath } from './migration.ts'
import { modelNames } from './names.ts'
import {
  apiKeysTemplate,
  controllerTemplate,
  moduleIndexTemplate,
  requestTemplate,
  resourceTemplate,
  routesTemplate,
  type TemplateContext,
} from './templates.ts'

export interface ApiScaffoldOptions {
  dialect: 'postgres' | 'sqlite'
  /** The models to generate, already chosen. */
  models: ModelInfo[]
  /** Absolute folder of the generated API (kiln.config `out`). */
  outDir: string
  /** Absolute path of the schema module. */
  schemaFile: string
  /** Absolute folder of the app's migrations. */
  migrationsDir: string
  /** Extra fields to leave out of resources. */
  exclude?: string[]
  /** Turn the automatic exclusion off. */
  includeAll?: boolean
}

export interface PlannedFile {
  /** Absolute path. */
  path: string
  contents: string
  /** The file is already there: it is skipped, never overwritten. */
  exists: boolean
}

/** Every file `make:api` would write for these models, with whether each already exists. */
export function planApiScaffold(options: ApiScaffoldOptions): PlannedFile[] {
  const { outDir } = options
  const ctx: TemplateContext = {
    dialect: options.dialect,
    schemaImport: importSpecifier(join(outDir, 'controllers'), options.schemaFile),
  }
  const files: Array<{ path: string; contents: string }> = []
  const models = options.models.map((model) => ({ model, names: modelNames(model) }))
  for (const { model, names } of models) {
    const excluded = (column: ModelInfo['columns'][number]) =>
      isExcludedField([column.name, column.key], {
        exclude: options.exclude,
        includeAll: options.includeAll,
      })
    const input = {
      model,
      names,
      shown: model.columns.filter((column) => !excluded(column)),
      hidden: model.columns.filter(excluded),
    }
    files.push(
      {
        path: join(outDir, 'controllers', `${names.pluralFile}.ts`),
        contents: controllerTemplate(input, ctx),
      },
      {
        path: join(outDir, 'resources', `${names.singularFile}.ts`),
        contents: resourceTemplate(input, ctx),
      },
      {
        path: join(outDir, 'requests', `${names.singularFile}.ts`),
        contents: requestTemplate(input, ctx),
      },
    )
  }
  files.push(
    { path: join(outDir, 'index.ts'), contents: moduleIndexTemplate({ models }) },
    { path: join(outDir, 'routes.ts'), contents: routesTemplate({ models }, ctx) },
    { path: join(outDir, 'api-keys.ts'), contents: apiKeysTemplate(ctx) },
    {
      path: apiKeysMigrationPath(options.migrationsDir),
      contents: apiKeysMigration(options.dialect),
    },
  )
  return files.map((file) => ({ ...file, exists: existsSync(file.path) }))
}

/** A relative import specifier from a folder to a module file: `../../schema.ts`. */
export function importSpecifier(fromDir: string, file: string): string {
  const path = relative(fromDir, file).split(sep).join('/')
  return path.startsWith('.') ? path : `./${path}`
}
