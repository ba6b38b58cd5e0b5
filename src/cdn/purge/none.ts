import { type Logger, silentLogger } from '../../core/logger.ts'
import { normalizePurgePaths } from './paths.ts'
import type { PurgeApi } from './types.ts'

/**
 * `CDN_PROVIDER=none`: purging is a logged no-op.
 * @example
 * ```ts
 * const purger =
 *   config.env === 'production'
 *     ? createPurgeApi(loadCdnConfig(process.env, { logger }))
 *     : noPurge({ logger })
 * ```
 */
export function noPurge(options: { logger?: Logger } = {}): PurgeApi {
  const logger = options.logger ?? silentLogger()
  return {
    provider: 'none',
    async purge(paths: string[]) {
      const normalized = normalizePurgePaths(paths)
      logger.info(
        { provider: 'none', paths: normalized },
        'CDN purge skipped: CDN_PROVIDER is none',
      )
    },
  }
}
