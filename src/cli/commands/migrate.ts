import { resolve } from 'node:path'
import type { Command } from 'commander'
import pc from 'picocolors'
import { MigrationError, migrate } from '../../db/index.ts'
import { openAppDatabase } from '../app-context.ts'
import { CliError } from '../cli-error.ts'

export interface MigrateCommandOptions {
  cwd?: string
  env?: Record<string, string | undefined>
  /** Where lines go; standard output by default. */
  print?: (line: string) => void
}

/** `kilnjs migrate`: kiln's own migrations, then the app's, on the app's database. */
export async function runMigrate(options: MigrateCommandOptions = {}): Promise<string[]> {
  const print = options.print ?? ((line: string) => console.log(line))
  const env = options.env ?? process.env
  // Behind a transaction pooler, DATABASE_URL is the pooler's and DATABASE_DIRECT_URL the
  // server's own: a migration's DDL and its lock go straight to the server.
  const direct = env.DATABASE_DIRECT_URL || undefined
  const app = await openAppDatabase({
    cwd: options.cwd,
    env: direct === undefined ? env : { ...env, DATABASE_URL: direct },
  })
  try {
    print(
      pc.dim(
        `Migrating ${direct === undefined ? app.description : app.description.replace(/^DATABASE_URL/, 'DATABASE_DIRECT_URL')}`,
      ),
    )
    const { migrations } = app.kilnConfig
    const { applied, adopted } = await migrate(app.database, {
      appMigrationsDir: migrations === undefined ? undefined : resolve(app.root, migrations),
      logger: { info: () => {}, warn: (message) => print(pc.yellow(message)) },
    })
    for (const name of adopted) {
      print(`${pc.cyan('=')} ${name} (applied by drizzle-kit migrate: recorded, not run again)`)
    }
    if (applied.length === 0) print('Nothing to migrate')
    for (const name of applied) print(`${pc.green('✓')} ${name}`)
    return applied
  } catch (error) {
    if (error instanceof MigrationError) throw new CliError(error.message, { cause: error })
    throw error
  } finally {
    await app.close()
  }
}

export function register(program: Command): void {
  program
    .command('migrate')
    .description("Apply kiln's migrations and the app's (kiln.config.ts `migrations`)")
    .action(async () => {
      await runMigrate()
    })
}
