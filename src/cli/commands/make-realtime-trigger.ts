import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, relative } from 'node:path'
import type { Command } from 'commander'
import { realtimeTriggerSql } from '../../api/realtime/trigger-sql.ts'
import { softDeleteColumn } from '../../api/rest/soft-delete.ts'
import type { ModelInfo } from '../../db/index.ts'
import { CliError } from '../cli-error.ts'
import { loadKilnConfig, loadModelRegistry } from '../models/load.ts'
import {
  apiKeysMigrationDir,
  isDrizzleKitFolder,
  planNewMigration,
} from '../scaffold/api/migration.ts'
import { chooseModels } from './make-api.ts'

export interface MakeRealtimeTriggerOptions {
  /** Model names (`Post`), resources (`posts`) or table names. */
  models?: string[]
  all?: boolean
  /** The migrations folder, instead of kiln.config.ts `migrations`. */
  migrations?: string
  /** The app's folder (holding kiln.config.ts); the current folder by default. */
  cwd?: string
  print?: (line: string) => void
  /** drizzle-kit's journal entry time (tests pin it). */
  now?: number
}

/**
 * `kilnjs make:realtime-trigger`: writes a migration that has PostgreSQL tell kiln of every
 * write to the chosen models' tables, whoever makes it (docs/realtime.md).
 */
export async function runMakeRealtimeTrigger(
  options: MakeRealtimeTriggerOptions,
): Promise<{ path: string }> {
  const print = options.print ?? ((line: string) => console.log(line))
  const loaded = await loadKilnConfig(options.cwd)
  const { config, root } = loaded
  if (config.dialect !== 'postgres') {
    throw new CliError(
      'make:realtime-trigger: the realtime trigger is PostgreSQL only (this app is SQLite); on SQLite kiln tells the writes it makes itself',
    )
  }
  const registry = await loadModelRegistry(loaded)
  const models = chooseModels(registry.models, options, (name) => registry.get(name))
  const migrationsDir = apiKeysMigrationDir(root, options.migrations ?? config.migrations)
  if (!migrationsDir) {
    throw new CliError(
      'make:realtime-trigger: no migrations folder: set `migrations` in kiln.config.ts or pass --migrations <dir>',
    )
  }
  const plan = planNewMigration(migrationsDir, 'realtime_trigger', {
    dialect: 'postgres',
    drizzleKit: isDrizzleKitFolder(root, migrationsDir),
    now: options.now ?? Date.now(),
  })
  mkdirSync(dirname(plan.path), { recursive: true })
  writeFileSync(plan.path, realtimeTriggerSql(models.map(capturedTable)), { flag: 'wx' })
  if (plan.journal) writeFileSync(plan.journal.path, plan.journal.contents)
  const shown = relative(process.cwd(), plan.path) || plan.path
  print(`Wrote ${shown}: ${models.map((model) => model.tableName).join(', ')}`)
  print('Next: run the migration, then give createRealtime the database:')
  print('  createRealtime({ shared, apiKeys, logger, outsideWrites: database })')
  return { path: plan.path }
}

function capturedTable(model: ModelInfo) {
  return {
    resource: model.resource,
    table: model.tableName,
    key: model.primaryKey!.name,
    deletedAt: softDeleteColumn(model.table)?.name,
  }
}

export function register(program: Command): void {
  program
    .command('make:realtime-trigger')
    .description('Write a PostgreSQL migration that tells kiln of writes made outside it')
    .argument('[models...]', 'model names (Post), resources (posts) or table names')
    .option('--all', 'every model of the schema module')
    .option('--migrations <dir>', 'the migrations folder (default: kiln.config.ts migrations)')
    .action(async (models: string[], flags: Omit<MakeRealtimeTriggerOptions, 'models'>) => {
      await runMakeRealtimeTrigger({ ...flags, models })
    })
}
