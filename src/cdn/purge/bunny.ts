import type { Secret } from '../../core/secret.ts'
import { purgeTargetUrl } from '../url.ts'
import { excerpt, runBatches } from './http.ts'
import { normalizePurgePaths } from './paths.ts'
import type { PurgeApi, PurgeHttpOptions } from './types.ts'

/** Options of `bunnyPurge`. */
export interface BunnyPurgeOptions extends PurgeHttpOptions {
  /** `CDN_URL`: full URLs are built from it. */
  cdnUrl: string
  /** The account API key (`CDN_PURGE_TOKEN`), sent as the `AccessKey` header. */
  token: Secret
  /** `{purge_api_url}`, default `https://api.bunny.net`. */
  apiUrl?: string
}

/**
 * Bunny CDN: `POST {purge_api_url}/purge?url={full_url}&async=false`, one request per path,
 * header `AccessKey`; success is 200 with an empty body. A trailing `*` purges a prefix.
 * @example
 * ```ts
 * const purger = bunnyPurge({
 *   cdnUrl: 'https://cdn.example.com',
 *   token: new Secret(process.env.BUNNY_TOKEN ?? ''),
 *   logger,
 * })
 * await purger.purge(['/assets/app.css'])
 * ```
 */
export function bunnyPurge(options: BunnyPurgeOptions): PurgeApi {
  if (!options.cdnUrl) throw new TypeError('bunnyPurge: CDN_URL is required')
  if (!options.token) throw new TypeError('bunnyPurge: CDN_PURGE_TOKEN is required')
  const api = (options.apiUrl ?? 'https://api.bunny.net').replace(/\/+$/, '')
  return {
    provider: 'bunny',
    async purge(paths: string[]) {
      const token = options.token.reveal()
      const batches = normalizePurgePaths(paths, options.cdnUrl).map((path) => {
        const query = new URLSearchParams({
          url: purgeTargetUrl(options.cdnUrl, path),
          async: 'false',
        })
        return {
          paths: [path],
          request: {
            method: 'POST' as const,
            url: `${api}/purge?${query}`,
            headers: { AccessKey: token },
          },
        }
      })
      await runBatches(batches, {
        ...options,
        provider: 'bunny',
        secrets: [options.token],
        check: ({ status, text }) => {
          if (status >= 200 && status < 300) return true
          if (status === 401) return 'the AccessKey was refused (check CDN_PURGE_TOKEN)'
          return excerpt(text, `unexpected status ${status}`)
        },
      })
    },
  }
}
