import { z } from 'zod'
import { ConfigError, type Env, envUrl, parseEnv } from '../core/config/index.ts'
import type { Logger, Redactor } from '../core/logger.ts'
import { Secret } from '../core/secret.ts'
import { CDN_PROVIDERS, type CdnProvider, DEFAULT_CDN_PROVIDER, descriptorOf } from './providers.ts'

export type { CdnProvider } from './providers.ts'

const url = envUrl('expected an absolute http(s) URL, e.g. https://cdn.example.com', [
  'http:',
  'https:',
])

type Setting = 'url' | 'token' | 'zone'

/** Each provider's legacy variables: `[provider, setting, variable]`. */
const LEGACY = CDN_PROVIDERS.flatMap((provider) =>
  Object.entries(descriptorOf(provider).legacy ?? {}).map(
    ([setting, variable]) => [provider, setting as Setting, variable] as const,
  ),
)

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
  ...Object.fromEntries(
    LEGACY.map(([, setting, variable]) => [
      variable,
      setting === 'url' ? url.optional() : z.string().optional(),
    ]),
  ),
})

const CURRENT: Record<Setting, string> = {
  url: 'CDN_URL',
  token: 'CDN_PURGE_TOKEN',
  zone: 'CDN_PURGE_ZONE',
}

/** Each legacy variable and what replaces it. */
export const LEGACY_CDN_VARIABLES: Record<string, string> = Object.fromEntries(
  LEGACY.map(([provider, setting, variable]) => [
    variable,
    setting === 'url' && provider !== DEFAULT_CDN_PROVIDER
      ? `CDN_URL and CDN_PROVIDER=${provider}`
      : CURRENT[setting],
  ]),
)

/** The legacy variable of one provider's setting, if it had one. */
const legacyOf = (provider: CdnProvider, setting: Setting) =>
  descriptorOf(provider).legacy?.[setting]

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
 * @example
 * ```ts
 * const cdn = loadCdnConfig(process.env, { logger, redactor })
 * ```
 */
export function loadCdnConfig(
  env: Env = process.env,
  options: LoadCdnConfigOptions = {},
): CdnConfig {
  const parsed = parseEnv(cdnEnvSchema, env, HEADING) as Record<string, string | undefined> & {
    CDN_PROVIDER?: CdnProvider
  }
  const used = new Set<string>()
  /** The current variable, else the provider's legacy one (noted as used). */
  const read = (provider: CdnProvider, setting: Setting): string | undefined => {
    const current = parsed[CURRENT[setting]]
    const legacy = legacyOf(provider, setting)
    if (current !== undefined || !legacy || !parsed[legacy]) return current
    used.add(legacy)
    return parsed[legacy]
  }

  let provider = parsed.CDN_PROVIDER
  if (provider === undefined) {
    // A legacy URL of another provider than the default names it.
    const implied = LEGACY.filter(
      ([p, setting, variable]) =>
        setting === 'url' && p !== DEFAULT_CDN_PROVIDER && parsed[variable],
    )
    if (implied.length > 1) {
      const names = implied.map(([, , variable]) => variable).join(' and ')
      throw new ConfigError({ CDN_PROVIDER: `is required: both ${names} are set` }, HEADING)
    }
    provider = implied[0]?.[0] ?? DEFAULT_CDN_PROVIDER
    if (implied[0]) used.add(implied[0][2])
  }

  let url = parsed.CDN_URL
  if (url === undefined && provider === 'none') {
    // Without a provider, any provider's legacy URL still sets the base of `cdnUrl()`.
    const found = LEGACY.find(([, setting, variable]) => setting === 'url' && parsed[variable])
    if (found) {
      url = parsed[found[2]]
      used.add(found[2])
    }
  } else if (url === undefined) {
    url = read(provider, 'url')
  }
  const token = read(provider, 'token')
  const zone = read(provider, 'zone')

  const problems = descriptorOf(provider).problems?.({ url, token, zone }) ?? {}
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
