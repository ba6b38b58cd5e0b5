import type { CdnConfig } from '../config.ts'
import { descriptorOf } from '../providers.ts'
import type { PurgeApi, PurgeHttpOptions } from './types.ts'

/**
 * The purge adapter `CDN_PROVIDER` selects, configured from `loadCdnConfig()`: its provider's
 * descriptor (src/cdn/providers.ts) builds it.
 * @example
 * ```ts
 * const purger = createPurgeApi(loadCdnConfig(), { logger })
 * ```
 */
export function createPurgeApi(config: CdnConfig, options: PurgeHttpOptions = {}): PurgeApi {
  return descriptorOf(config.provider).create(config, options)
}
