import type { Secret } from '../core/secret.ts'
import { bunnyPurge } from './purge/bunny.ts'
import { cloudflarePurge } from './purge/cloudflare.ts'
import { digitalOceanPurge } from './purge/digitalocean.ts'
import { noPurge } from './purge/none.ts'
import type { PurgeApi, PurgeHttpOptions } from './purge/types.ts'

/** The settings a purge adapter is built from, as `loadCdnConfig` read them. */
export interface PurgeSettings {
  url: string | undefined
  purgeToken: Secret | undefined
  purgeZone: string | undefined
  purgeApiUrl: string | undefined
}

/** A setting `CDN_URL`, `CDN_PURGE_TOKEN` or `CDN_PURGE_ZONE`. */
type Setting = 'url' | 'token' | 'zone'

/**
 * One CDN provider, described once: `loadCdnConfig` reads its legacy variables and checks its
 * settings from here, and `createPurgeApi` builds its adapter from here. Adding a provider is
 * adding one descriptor.
 */
export interface CdnProviderDescriptor {
  /** The variables that preceded `CDN_URL`, `CDN_PURGE_TOKEN`, `CDN_PURGE_ZONE` (deprecated). */
  legacy?: Partial<Record<Setting, string>>
  /** What is wrong with the settings for this provider, by variable: empty when they serve. */
  problems?: (settings: Record<Setting, unknown>) => Record<string, string>
  create(settings: PurgeSettings, options: PurgeHttpOptions): PurgeApi
}

/** The provider when `CDN_PROVIDER` is unset and no legacy variable names another. */
export const DEFAULT_CDN_PROVIDER = 'digitalocean'

/** Problems when `url` and `token` are missing: what a provider sending full URLs needs. */
function needsUrlAndToken(provider: string, settings: Record<Setting, unknown>) {
  const problems: Record<string, string> = {}
  if (!settings.url) problems.CDN_URL = `is required for CDN_PROVIDER=${provider}`
  if (!settings.token) problems.CDN_PURGE_TOKEN = `is required for CDN_PROVIDER=${provider}`
  return problems
}

/** A setting the provider's check required: a TypeError for a config built by hand without it. */
function required<T>(value: T | undefined, variable: string, provider: string): T {
  if (value === undefined) throw new TypeError(`CDN_PROVIDER=${provider} needs ${variable}`)
  return value
}

export const CDN_PROVIDER_DESCRIPTORS = {
  none: { create: (_settings, options) => noPurge(options) },
  digitalocean: {
    legacy: {
      url: 'DIGITALOCEAN_CDN_URL',
      token: 'DIGITALOCEAN_TOKEN',
      zone: 'DIGITALOCEAN_CDN_ENDPOINT_ID',
    },
    problems: ({ zone, token }): Record<string, string> =>
      zone && !token ? { CDN_PURGE_TOKEN: 'is required when CDN_PURGE_ZONE is set' } : {},
    create: (s, options) =>
      digitalOceanPurge({
        ...options,
        endpointId: s.purgeZone,
        token: s.purgeToken,
        apiUrl: s.purgeApiUrl,
        cdnUrl: s.url,
      }),
  },
  bunny: {
    legacy: { url: 'BUNNY_CDN_URL', token: 'BUNNY_API_KEY' },
    problems: (settings) => needsUrlAndToken('bunny', settings),
    create: (s, options) =>
      bunnyPurge({
        ...options,
        cdnUrl: required(s.url, 'CDN_URL', 'bunny'),
        token: required(s.purgeToken, 'CDN_PURGE_TOKEN', 'bunny'),
        apiUrl: s.purgeApiUrl,
      }),
  },
  cloudflare: {
    legacy: {
      url: 'CLOUDFLARE_CDN_URL',
      token: 'CLOUDFLARE_API_TOKEN',
      zone: 'CLOUDFLARE_ZONE_ID',
    },
    problems: (settings) => ({
      ...needsUrlAndToken('cloudflare', settings),
      ...(settings.zone
        ? {}
        : { CDN_PURGE_ZONE: 'is required for CDN_PROVIDER=cloudflare (the zone id)' }),
    }),
    create: (s, options) =>
      cloudflarePurge({
        ...options,
        cdnUrl: required(s.url, 'CDN_URL', 'cloudflare'),
        token: required(s.purgeToken, 'CDN_PURGE_TOKEN', 'cloudflare'),
        zoneId: required(s.purgeZone, 'CDN_PURGE_ZONE', 'cloudflare'),
        apiUrl: s.purgeApiUrl,
      }),
  },
} satisfies Record<string, CdnProviderDescriptor>

/** The CDN whose purge API is used, or `none`. */
export type CdnProvider = keyof typeof CDN_PROVIDER_DESCRIPTORS

export const CDN_PROVIDERS = Object.keys(CDN_PROVIDER_DESCRIPTORS) as [
  CdnProvider,
  ...CdnProvider[],
]

/** The descriptor of a provider, as its interface (every field optional but `create`). */
export const descriptorOf = (provider: CdnProvider): CdnProviderDescriptor =>
  CDN_PROVIDER_DESCRIPTORS[provider]
