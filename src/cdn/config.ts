import { z } from 'zod'
import { ConfigError, type Env, envUrl, parseEnv } from '../core/config/index.ts'
import type { Logger, Redactor } from '../core/logger.ts'
import { Secret } from '../core/secret.ts'

export const CDN_PROVIDERS = ['none', 'digitalocean', 'bunny', 'cloudflare'] as const
/** The CDN whose purge API is used, or `none`. */
export type CdnProvider = (typeof CDN_PROVIDERS)[number]

const url = envUrl('expected an absolute http(s) URL, e.g. https://cdn.example.com', [
  'http:',
  'https:',
])

export const cdnEnvSchema = z.object({
  CDN_URL: url.optional(),
  CDN_PROVIDER: z
    .enum(CDN_PROVIDERS, { message: `expected one of ${CDN_PROVIDERS.join(', ')}` })
    .optional(),
  CDN_PURGE_TOKEN: z.string().optional(),
  CDN_PURGE_ZONE: z.string().optional(),
  /** The provider API base URL (tests, proxies); each provider's public API by default. */
  CDN_PURGE_API_URL: url.optional(),
  // Legacy names, read only when the current variable is unset.
  DIGITALOCEAN_CDN_URL: url.optional(),
  BUNNY_CDN_URL: url.optional(),
  CLOUDFLARE_CDN_URL: url.optional(),
  DIGITALOCEAN_CDN_ENDPOINT_ID: z.string().optional(),
  CLOUDFLARE_ZONE_ID: z.string().optional(),
  DIGITALOCEAN_TOKEN: z.string().optional(),
  BUNNY_API_KEY: z.string().optional(),
  CLOUDFLARE_API_TOKEN: z.string().optional(),
})

type Parsed = z.output<typeof cdnEnvSchema>
type LegacyName = Exclude<
  keyof Parsed,
  'CDN_URL' | 'CDN_PROVIDER' | 'CDN_PURGE_TOKEN' | 'CDN_PURGE_ZONE' | 'CDN_PURGE_API_URL'
>

/** Each legacy variable and what replaces it. */
export const LEGACY_CDN_VARIABLES: Record<LegacyName, string> = {
  DIGITALOCEAN_CDN_URL: 'CDN_URL',
  BUNNY_CDN_URL: 'CDN_URL and CDN_PROVIDER=bunny',
  CLOUDFLARE_CDN_URL: 'CDN_URL and CDN_PROVIDER=cloudflare',
  DIGITALOCEAN_CDN_ENDPOINT_ID: 'CDN_PURGE_ZONE',
  CLOUDFLARE_ZONE_ID: 'CDN_PURGE_ZONE',
  DIGITALOCEAN_TOKEN: 'CDN_PURGE_TOKEN',
  BUNNY_API_KEY: 'CDN_PURGE_TOKEN',
  CLOUDFLARE_API_TOKEN: 'CDN_PURGE_TOKEN',
}

const LEGACY_URL: Record<Exclude<CdnProvider, 'none'>, LegacyName> = {
  digitalocean: 'DIGITALOCEAN_CDN_URL',
  bunny: 'BUNNY_CDN_URL',
  cloudflare: 'CLOUDFLARE_CDN_URL',
}
const LEGACY_TOKEN: Record<Exclude<CdnProvider, 'none'>, LegacyName> = {
  digitalocean: 'DIGITALOCEAN_TOKEN',
  bunny: 'BUNNY_API_KEY',
  cloudflare: 'CLOUDFLARE_API_TOKEN',
}
const LEGACY_ZONE: Partial<Record<CdnProvider, LegacyName>> = {
  digitalocean: 'DIGITALOCEAN_CDN_ENDPOINT_ID',
  cloudflare: 'CLOUDFLARE_ZONE_ID',
}

/** The CDN settings read from the environment by `loadCdnConfig`. */
export interface CdnConfig {
  /** `CDN_URL`: the base of `cdnUrl()` and of the full URLs sent to purge APIs. */
  url: string | undefined
  provider: CdnProvider
  /** Prints as `<redacted>`; `purgeToken.reveal()` reads it. */
  purgeToken: Secret | undefined
  /** CDN endpoint id (DigitalOcean) or zone id (Cloudflare). */
  purgeZone: string | undefined
  purgeApiUrl: string | undefined
  /** The legacy variables that were read (each produced one deprecation warning). */
  deprecated: string[]
}

/** Options of `loadCdnConfig`. */
export interface LoadCdnConfigOptions {
  /** Deprecation warnings go here (`warn`); otherwise to `process.emitWarning`. */
  logger?: Logger
  /** The purge token is registered here, so no log line can carry it. */
  redactor?: Redactor
}

const HEADING = 'Invalid CDN configuration'

/**
 * Reads `CDN_URL`, `CDN_PROVIDER` (default `digitalocean`), `CDN_PURGE_TOKEN`,
 * `CDN_PURGE_ZONE` and `CDN_PURGE_API_URL`, falling back to the legacy variables in
 * `LEGACY_CDN_VARIABLES` with one deprecation warning per legacy variable read.
 */
export function loadCdnConfig(
  env: Env = process.env,
  options: LoadCdnConfigOptions = {},
): CdnConfig {
  const parsed = parseEnv(cdnEnvSchema, env, HEADING)
  const used = new Set<LegacyName>()

  let provider: CdnProvider | undefined = parsed.CDN_PROVIDER
  if (provider === undefined) {
    const implied = (['bunny', 'cloudflare'] as const).filter((p) => parsed[LEGACY_URL[p]])
    if (implied.length > 1) {
      throw new ConfigError(
        { CDN_PROVIDER: 'is required: both BUNNY_CDN_URL and CLOUDFLARE_CDN_URL are set' },
        HEADING,
      )
    }
    provider = implied[0] ?? 'digitalocean'
    if (implied[0]) used.add(LEGACY_URL[implied[0]])
  }

  let url = parsed.CDN_URL
  if (url === undefined) {
    const candidates: LegacyName[] =
      provider === 'none'
        ? ['DIGITALOCEAN_CDN_URL', 'BUNNY_CDN_URL', 'CLOUDFLARE_CDN_URL']
        : [LEGACY_URL[provider]]
    const found = candidates.find((name) => parsed[name])
    if (found) {
      url = parsed[found]
      used.add(found)
    }
  }

  let token = parsed.CDN_PURGE_TOKEN
  if (token === undefined && provider !== 'none' && parsed[LEGACY_TOKEN[provider]]) {
    token = parsed[LEGACY_TOKEN[provider]]
    used.add(LEGACY_TOKEN[provider])
  }

  let zone = parsed.CDN_PURGE_ZONE
  const legacyZone = LEGACY_ZONE[provider]
  if (zone === undefined && legacyZone && parsed[legacyZone]) {
    zone = parsed[legacyZone]
    used.add(legacyZone)
  }

  const problems: Record<string, string> = {}
  if (provider === 'bunny' || provider === 'cloudflare') {
    if (!url) problems.CDN_URL = `is required for CDN_PROVIDER=${provider}`
    if (!token) problems.CDN_PURGE_TOKEN = `is required for CDN_PROVIDER=${provider}`
  }
  if (provider === 'cloudflare' && !zone) {
    problems.CDN_PURGE_ZONE = 'is required for CDN_PROVIDER=cloudflare (the zone id)'
  }
  if (provider === 'digitalocean' && zone && !token) {
    problems.CDN_PURGE_TOKEN = 'is required when CDN_PURGE_ZONE is set'
  }
  if (Object.keys(problems).length > 0) throw new ConfigError(problems, HEADING)

  for (const name of used) {
    const message = `${name} is deprecated: set ${LEGACY_CDN_VARIABLES[name]} instead`
    if (options.logger) options.logger.warn({ variable: name }, message)
    else process.emitWarning(message, { type: 'DeprecationWarning', code: 'KILN_CDN_LEGACY_ENV' })
  }
  if (token) options.redactor?.add(token)

  return {
    url,
    provider,
    purgeToken: token === undefined ? undefined : new Secret(token),
    purgeZone: zone,
    purgeApiUrl: parsed.CDN_PURGE_API_URL,
    deprecated: [...used],
  }
}
