import type { Secret } from '../../core/secret.ts'
import { purgeTargetUrl } from '../url.ts'
import { chunk, excerpt, runBatches } from './http.ts'
import { isWildcard, normalizePurgePaths } from './paths.ts'
import type { PurgeApi, PurgeHttpOptions } from './types.ts'

/** Options of `cloudflarePurge`. */
export interface CloudflarePurgeOptions extends PurgeHttpOptions {
  /** `CDN_URL`: full URLs (and prefixes) are built from it. */
  cdnUrl: string
  token: Secret
  /** `CDN_PURGE_ZONE`. */
  zoneId: string
  /** Default `https://api.cloudflare.com/client/v4`. */
  apiUrl?: string
  /** Files (or prefixes) per request; 30 is accepted on every plan. */
  chunkSize?: number
}

/**
 * Cloudflare: `POST /zones/{zone_id}/purge_cache` with bearer auth. Files go as full URLs in
 * `{ files }`, chunks of 30; `dir/*` becomes a `{ prefixes: ["host/dir/"] }` request (no
 * wildcards in `files`); `*` alone is `{ purge_everything: true }`. The answer's `success`
 * is checked, since a 200 can carry `success: false`.
 * @example
 * ```ts
 * const purger = cloudflarePurge({
 *   cdnUrl: 'https://cdn.example.com',
 *   token: new Secret(process.env.CLOUDFLARE_TOKEN ?? ''),
 *   zoneId: '023e105f4ecef8ad9ca31a8372d0c353',
 *   logger,
 * })
 * ```
 */
export function cloudflarePurge(options: CloudflarePurgeOptions): PurgeApi {
  if (!options.cdnUrl) throw new TypeError('cloudflarePurge: CDN_URL is required')
  if (!options.token) throw new TypeError('cloudflarePurge: CDN_PURGE_TOKEN is required')
  if (!options.zoneId)
    throw new TypeError('cloudflarePurge: CDN_PURGE_ZONE (the zone id) is required')
  const size = options.chunkSize ?? 30
  const api = (options.apiUrl ?? 'https://api.cloudflare.com/client/v4').replace(/\/+$/, '')
  const base = new URL(options.cdnUrl)
  const prefixBase = `${base.host}${base.pathname.replace(/\/+$/, '')}`
  return {
    provider: 'cloudflare',
    async purge(paths: string[]) {
      const token = options.token.reveal()
      const normalized = normalizePurgePaths(paths, options.cdnUrl)
      const url = `${api}/zones/${encodeURIComponent(options.zoneId)}/purge_cache`
      const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }
      const request = (body: unknown) => ({
        method: 'POST' as const,
        url,
        headers,
        body: JSON.stringify(body),
      })
      const batches = normalized.includes('*')
        ? [{ paths: ['*'], request: request({ purge_everything: true }) }]
        : [
            ...chunk(
              normalized.filter((p) => !isWildcard(p)),
              size,
            ).map((batch) => ({
              paths: batch,
              request: request({ files: batch.map((p) => purgeTargetUrl(options.cdnUrl, p)) }),
            })),
            ...chunk(normalized.filter(isWildcard), size).map((batch) => ({
              paths: batch,
              request: request({
                prefixes: batch.map((p) => `${prefixBase}/${encodeURI(p.slice(0, -1))}`),
              }),
            })),
          ]
      await runBatches(batches, {
        ...options,
        provider: 'cloudflare',
        secrets: [options.token],
        check: ({ status, text }) => {
          let success = false
          try {
            success = (JSON.parse(text) as { success?: unknown }).success === true
          } catch {}
          if (status >= 200 && status < 300 && success) return true
          return excerpt(text, `unexpected status ${status}`)
        },
      })
    },
  }
}
