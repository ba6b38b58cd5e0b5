import { systemClock } from '../../core/clock.ts'
import type { WindowLimit } from '../../core/http/rate-limiters.ts'
import { silentLogger } from '../../core/logger.ts'
import type { Secret } from '../../core/secret.ts'
import { chunk, excerpt, runBatches } from './http.ts'
import { normalizePurgePaths } from './paths.ts'
import { RedisSlidingWindow } from './redis-window.ts'
import type { PurgeApi, PurgeHttpOptions } from './types.ts'
import { SlidingWindow } from './window.ts'

/** Options of `digitalOceanPurge`. */
export interface DigitalOceanPurgeOptions extends PurgeHttpOptions {
  /** The CDN endpoint id (`CDN_PURGE_ZONE`); unset → purge logs and succeeds. */
  endpointId: string | undefined
  token: Secret | undefined
  /** Default `https://api.digitalocean.com`. */
  apiUrl?: string
  /** Optional: a full CDN URL passed as a path is turned back into a relative path. */
  cdnUrl?: string
}

/** DigitalOcean takes at most 50 files per request and 5 requests per 10 seconds. */
export const DIGITALOCEAN_BATCH = 50
export const DIGITALOCEAN_WINDOW: WindowLimit = { points: 5, durationSeconds: 10 }

/**
 * DigitalOcean Spaces CDN: `DELETE /v2/cdn/endpoints/{id}/cache` with `{ files: [...] }`
 * (paths relative to the origin; a wildcard counts as one), success 204.
 * @example
 * ```ts
 * const purger = digitalOceanPurge({
 *   endpointId: '19f06b6a-3ace-4315-b086-499a0e521b76',
 *   token: new Secret(process.env.DIGITALOCEAN_TOKEN ?? ''),
 *   logger,
 * })
 * ```
 */
export function digitalOceanPurge(options: DigitalOceanPurgeOptions): PurgeApi {
  const logger = options.logger ?? silentLogger()
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)))
  // The limit is the account's, not the process's: with Redis every instance shares one window.
  const window = options.redis
    ? new RedisSlidingWindow({
        redis: options.redis,
        key: `${options.redisPrefix ?? 'kiln:'}cdn-purge:digitalocean:${options.endpointId ?? ''}`,
        window: DIGITALOCEAN_WINDOW,
        sleep,
      })
    : new SlidingWindow(DIGITALOCEAN_WINDOW, options.clock ?? systemClock, sleep)
  if (options.endpointId && !options.token) {
    throw new TypeError('digitalOceanPurge: CDN_PURGE_TOKEN is required when CDN_PURGE_ZONE is set')
  }
  const api = (options.apiUrl ?? 'https://api.digitalocean.com').replace(/\/+$/, '')
  return {
    provider: 'digitalocean',
    async purge(paths: string[]) {
      const files = normalizePurgePaths(paths, options.cdnUrl)
      if (!options.endpointId) {
        logger.warn(
          { provider: 'digitalocean', paths: files.length },
          'CDN purge skipped: CDN_PURGE_ZONE (the CDN endpoint id) is not set',
        )
        return
      }
      const token = options.token!.reveal()
      const url = `${api}/v2/cdn/endpoints/${encodeURIComponent(options.endpointId)}/cache`
      const batches = chunk(files, DIGITALOCEAN_BATCH).map((batch) => ({
        paths: batch,
        request: {
          method: 'DELETE' as const,
          url,
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ files: batch }),
        },
      }))
      await runBatches(batches, {
        ...options,
        sleep,
        provider: 'digitalocean',
        secrets: [options.token!],
        beforeRequest: () => window.acquire(),
        check: ({ status, text }) =>
          status >= 200 && status < 300 ? true : excerpt(text, `unexpected status ${status}`),
      })
    },
  }
}
