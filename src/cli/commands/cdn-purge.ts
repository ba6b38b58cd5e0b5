import type { Command } from 'commander'
import pc from 'picocolors'
import type { PurgeHttpOptions } from '../../cdn/index.ts'
import {
  createPurgeApi,
  InvalidPurgePathError,
  loadCdnConfig,
  PurgeFailedError,
} from '../../cdn/index.ts'
import type { Env } from '../../core/config/index.ts'
import { createLogger, type Logger, Redactor } from '../../core/logger.ts'
import { RedisConnections } from '../../core/redis.ts'
import { CliError } from '../cli-error.ts'

export interface CdnPurgeOptions {
  /** Purge the whole cache (`*`): refused unless asked for explicitly. */
  all?: boolean
  env?: Env
  logger?: Logger
  /** Where the one-line summary goes. */
  print?: (line: string) => void
  http?: PurgeHttpOptions
}

/**
 * `kilnjs cdn:purge <path>...`: purges the given paths through the adapter `CDN_PROVIDER`
 * selects. `*` (the whole cache) needs `--all`, per the purge policy.
 */
export async function runCdnPurge(
  paths: string[],
  options: CdnPurgeOptions = {},
): Promise<string[]> {
  const env = options.env ?? process.env
  const print = options.print ?? ((line: string) => console.log(line))
  const wantsEverything = paths.some((path) => path.replace(/^\/+/, '') === '*')
  if (wantsEverything && !options.all) {
    throw new CliError(
      'Purging * invalidates the whole CDN cache: run `kilnjs cdn:purge --all` to do it deliberately',
    )
  }
  const targets = options.all ? ['*'] : paths
  if (targets.length === 0) {
    throw new CliError('Name the paths to purge (e.g. kilnjs cdn:purge index.html), or use --all')
  }
  const redactor = new Redactor()
  const logger =
    options.logger ?? createLogger({ level: env.LOG_LEVEL ?? 'warn', redactor, name: 'kiln-cdn' })
  const config = loadCdnConfig(env, { logger, redactor })
  // With REDIS_URL the DigitalOcean request window is shared with the app's instances.
  const connections =
    env.REDIS_URL && !options.http?.redis ? new RedisConnections(env.REDIS_URL) : undefined
  const api = createPurgeApi(config, {
    ...options.http,
    logger,
    ...(connections ? { redis: connections.connect({ name: 'kiln-cdn-purge' }) } : {}),
  })
  try {
    await api.purge(targets)
  } catch (error) {
    if (error instanceof PurgeFailedError || error instanceof InvalidPurgePathError) {
      throw new CliError(redactor.scrub(error.message), { cause: error })
    }
    throw error
  } finally {
    await connections?.close()
  }
  if (config.provider === 'none') {
    print(pc.yellow('CDN_PROVIDER is none: nothing was purged'))
  } else if (config.provider === 'digitalocean' && !config.purgeZone) {
    print(pc.yellow('CDN_PURGE_ZONE is not set: nothing was purged'))
  } else {
    const what = options.all ? 'the whole cache' : `${targets.length} path(s)`
    print(pc.green(`Purged ${what} on ${config.provider}`))
  }
  return targets
}

export function register(program: Command): void {
  program
    .command('cdn:purge')
    .description('Purge CDN cache entries by path (index.html, assets/*); --all purges everything')
    .argument('[paths...]', 'paths relative to CDN_URL')
    .option('--all', 'purge the whole cache (*)', false)
    .action(async (paths: string[], flags: { all: boolean }) => {
      await runCdnPurge(paths, { all: flags.all })
    })
}
