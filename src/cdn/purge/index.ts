import type { CdnConfig } from '../config.ts'
import { bunnyPurge } from './bunny.ts'
import { cloudflarePurge } from './cloudflare.ts'
import { digitalOceanPurge } from './digitalocean.ts'
import { noPurge } from './none.ts'
import type { PurgeApi, PurgeHttpOptions } from './types.ts'

/**
 * The purge adapter `CDN_PROVIDER` selects, configured from `loadCdnConfig()`.
 * @example
 * ```ts
 * const purger = createPurgeApi(loadCdnConfig(), { logger })
 * ```
 */
export function createPurgeApi(config: CdnConfig, options: PurgeHttpOptions = {}): PurgeApi {
  const apiUrl = config.purgeApiUrl
  switch (config.provider) {
    case 'none':
      return noPurge(options)
    case 'digitalocean':
      return digitalOceanPurge({
        ...options,
        endpointId: config.purgeZone,
        token: config.purgeToken,
        apiUrl,
        cdnUrl: config.url,
      })
    case 'bunny':
      return bunnyPurge({ ...options, cdnUrl: config.url!, token: config.purgeToken!, apiUrl })
    case 'cloudflare':
      return cloudflarePurge({
        ...options,
        cdnUrl: config.url!,
        token: config.purgeToken!,
        zoneId: config.purgeZone!,
        apiUrl,
      })
  }
}
