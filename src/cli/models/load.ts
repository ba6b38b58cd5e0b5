import { existsSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { importOptional, isMissingPackage } from '../../core/optional-package.ts'
import { type KilnConfig, kilnConfigSchema } from '../../db/kiln-config.ts'
import {
  createModelRegistry,
  type ModelRegistry,
  ModelRegistryError,
} from '../../db/models/registry.ts'
// A plain error class, so every caller (the kiln command, an app's script) prints these
// failures as one line.
import { CliError } from '../cli-error.ts'
import { describeLoadFailure } from './load-failure.ts'

/** What `loadKilnConfig` returns: the validated config and where it was found. */
export interface LoadedKilnConfig {
  config: KilnConfig
  /** The folder holding the config file; the config's paths are relative to it. */
  root: string
  /** The config file. */
  path: string
}

const CONFIG_FILES = ['kiln.config.ts', 'kiln.config.mts', 'kiln.config.js', 'kiln.config.mjs']

/** The nearest tsconfig.json at or above `dir`, so path aliases of the app resolve. */
function nearestTsconfig(dir: string): string | false {
  let current = dir
  for (;;) {
    const candidate = join(current, 'tsconfig.json')
    if (existsSync(candidate)) return candidate
    const parent = dirname(current)
    if (parent === current) return false
    current = parent
  }
}

/**
 * Imports an app's TypeScript (or JavaScript) module at run time (kiln.config.ts, the schema,
 * the worker) through tsx, which the kiln command needs and a running app does not: it is an
 * optional peer, in the app's devDependencies. Without it a JavaScript file, or any file on a
 * Node that strips types itself, is imported as is. Outside a `"type": "module"` package tsx
 * compiles to CommonJS, whose exports then arrive as the `default` export: they are unwrapped
 * so both module kinds look the same.
 */
export async function importAppModule(file: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(file).href
  let tsImport: typeof import('tsx/esm/api').tsImport
  try {
    ;({ tsImport } = await import('tsx/esm/api'))
  } catch (error) {
    if (!isMissingPackage(error, 'tsx') || !canImportWithoutTsx(file)) {
      return importOptional('tsx', `Loading ${relative(process.cwd(), file) || file}`, () =>
        Promise.reject(error),
      )
    }
    return (await import(url)) as Record<string, unknown>
  }
  const loaded = (await tsImport(url, {
    parentURL: import.meta.url,
    tsconfig: nearestTsconfig(dirname(file)),
  })) as Record<string, unknown>
  const commonJs = loaded.default
  if (typeof commonJs === 'object' && commonJs !== null && '__esModule' in commonJs) {
    return { ...(commonJs as Record<string, unknown>) }
  }
  return loaded
}

function canImportWithoutTsx(file: string): boolean {
  const stripsTypes = (process.features as { typescript?: unknown }).typescript
  return /\.m?js$/.test(file) || (typeof stripsTypes === 'string' && stripsTypes !== 'false')
}

/** Loads the module exporting an app's Drizzle tables (a path absolute or relative to the cwd). */
export async function loadSchemaModule(path: string): Promise<Record<string, unknown>> {
  const file = resolve(path)
  if (!existsSync(file) || !statSync(file).isFile()) {
    throw new CliError(`Schema module not found: ${file}`)
  }
  try {
    return await importAppModule(file)
  } catch (error) {
    throw new CliError(`Could not load the schema module ${file}: ${describeLoadFailure(error)}`, {
      cause: error,
    })
  }
}

/**
 * Finds `kiln.config.ts` in `cwd`, loads it and validates its default export. A missing file,
 * a module that fails to load and an invalid field are each one clear CliError.
 * @example
 * ```ts
 * const loaded = await loadKilnConfig() // { config, root, path }
 * ```
 */
export async function loadKilnConfig(cwd: string = process.cwd()): Promise<LoadedKilnConfig> {
  const root = resolve(cwd)
  const path = CONFIG_FILES.map((name) => join(root, name)).find((file) => existsSync(file))
  if (!path) {
    throw new CliError(
      `No kiln.config.ts in ${root}: run kiln from your app's root, or set kiln up there with npx kilnjs init`,
    )
  }
  const name = relative(root, path)
  let loaded: Record<string, unknown>
  try {
    loaded = await importAppModule(path)
  } catch (error) {
    throw new CliError(`Could not load ${name}: ${describeLoadFailure(error)}`, { cause: error })
  }
  if (loaded.default === undefined) {
    throw new CliError(`${name} has no default export: export default defineConfig({ … })`)
  }
  const result = kilnConfigSchema.safeParse(loaded.default)
  if (!result.success) {
    const problems = result.error.issues.map((issue) =>
      issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message,
    )
    throw new CliError(`${name} is invalid: ${problems.join('; ')}`)
  }
  return { config: result.data as KilnConfig, root, path }
}

/**
 * The model registry of a loaded config's schema module.
 * @example
 * ```ts
 * const models = await loadModelRegistry(await loadKilnConfig())
 * ```
 */
export async function loadModelRegistry(loaded: LoadedKilnConfig): Promise<ModelRegistry> {
  const schemaModule = await loadSchemaModule(resolve(loaded.root, loaded.config.schema))
  try {
    return createModelRegistry(schemaModule, loaded.config.dialect)
  } catch (error) {
    if (error instanceof ModelRegistryError) throw new CliError(error.reason, { cause: error })
    throw error
  }
}
