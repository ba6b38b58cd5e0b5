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
  /** Where `kiln make:api` writes the generated API. */
  out: string
  /** The app's SQL migrations (run by `kiln migrate` after kiln's own). */
  migrations?: string
  /** Database URL when `DATABASE_URL` is not set. */
  databaseUrl?: string
  /** Module whose default export builds the job handlers for `kiln queue:work`. */
  worker?: string
  /** Where `kiln make:messaging` writes the messaging scaffold. */
  messaging?: string
}

/** Types a `kiln.config.ts` default export. */
export function defineConfig(config: KilnConfig): KilnConfig {
  return config
}
