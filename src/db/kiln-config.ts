import { z } from 'zod'
import type { Dialect } from './database.ts'

/**
 * `kiln.config.ts` at an app's root: where kiln finds the app's models and where it writes.
 * Paths are relative to the config file.
 */
export interface KilnConfig {
  /** The dialect of the app's Drizzle tables. */
  dialect: Dialect
  /** The module exporting the app's Drizzle tables. */
  schema: string
  /** Where `kilnjs make:api` writes the generated API. */
  out: string
  /** The app's SQL migrations (run by `kilnjs migrate` after kiln's own). */
  migrations?: string
  /** Database URL when `DATABASE_URL` is not set. */
  databaseUrl?: string
  /** Module whose default export builds the job handlers for `kilnjs queue:work`. */
  worker?: string
  /** Where `kilnjs make:messaging` writes the messaging scaffold. */
  messaging?: string
  /**
   * The module `kilnjs init:mcp` writes (`./src/mcp.ts`): `kilnjs mcp` follows its `mcpAccess`
   * export, the access policy `/mcp` uses. Without it `kilnjs mcp` reaches every model.
   */
  mcp?: string
}

/**
 * Types a `kiln.config.ts` default export.
 * @example
 * ```ts
 * // kiln.config.ts
 * export default defineConfig({ dialect: 'postgres', schema: './src/schema.ts', out: './src/api' })
 * ```
 */
export function defineConfig(config: KilnConfig): KilnConfig {
  return config
}

const path = (what: string) =>
  z.string({ message: `expected a path (${what})` }).min(1, `expected a path (${what})`)

/**
 * Validates a loaded config. Unknown fields pass through, so a newer field read by one
 * command does not break the others.
 */
export const kilnConfigSchema = z.looseObject({
  dialect: z.enum(['postgres', 'sqlite'], { message: "expected 'postgres' or 'sqlite'" }),
  schema: path('the module exporting your Drizzle tables'),
  out: path('the folder kilnjs make:api writes to'),
  migrations: path("the folder of the app's SQL migrations").optional(),
  databaseUrl: z
    .string({ message: 'expected a database URL' })
    .min(1, 'expected a database URL')
    .optional(),
  worker: path('the module building the job handlers').optional(),
  messaging: path('the folder kilnjs make:messaging writes to').optional(),
  mcp: path('the module exporting mcpAccess, as kilnjs init:mcp writes it').optional(),
})
