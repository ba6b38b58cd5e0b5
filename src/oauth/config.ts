import { randomBytes } from 'node:crypto'
import { z } from 'zod'
import { ConfigError, type Env, parseEnv } from '../core/config/parse-env.ts'
import type { Logger } from '../core/logger.ts'
import { Secret } from '../core/secret.ts'

/** The OAuth server's settings, read by `loadOAuthConfig`. */
export interface OAuthConfig {
  /** HMAC-SHA256 secret that signs access tokens; prints as `<redacted>`, `reveal()` reads it. */
  secret: Secret
  /** The issuer and base URL: an origin without a trailing slash, e.g. `https://app.example.com`. */
  issuer: string
  /** True when no `MCP_TOKEN_SECRET` was set and a random one was made for this process. */
  secretGenerated: boolean
}

/** Options of `loadOAuthConfig`. */
export interface LoadOAuthConfigOptions {
  /** In production both variables are required; in development missing ones get defaults. */
  production: boolean
  /** The base URL to use in development when `APP_URL` is unset (default `http://localhost:3000`). */
  fallbackUrl?: string
  /** Receives the development warning about a generated secret. */
  logger?: Pick<Logger, 'warn'>
}

export const MIN_SECRET_LENGTH = 32

const schema = (production: boolean) =>
  z.object({
    MCP_TOKEN_SECRET: production
      ? z
          .string()
          .min(MIN_SECRET_LENGTH, `expected at least ${MIN_SECRET_LENGTH} characters of random`)
      : z
          .string()
          .min(MIN_SECRET_LENGTH, `expected at least ${MIN_SECRET_LENGTH} characters of random`)
          .optional(),
    APP_URL: production ? baseUrl : baseUrl.optional(),
  })

const baseUrl = z.string().refine((value) => normalizeIssuer(value) !== undefined, {
  message:
    'expected the absolute http(s) origin the app is served at, e.g. https://app.example.com',
})

/** The issuer for a base URL: origin only, no trailing slash; undefined when it is not one. */
export function normalizeIssuer(value: string): string | undefined {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return undefined
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined
  if (url.username || url.password || url.search || url.hash || value.includes('#')) {
    return undefined
  }
  if (url.pathname !== '/' && url.pathname !== '') return undefined
  return url.origin
}

/**
 * Reads `MCP_TOKEN_SECRET` and `APP_URL`. In production a missing or bad value is a
 * `ConfigError` naming each variable; in development a missing secret is generated for this
 * process (tokens then end with it) and a warning says so.
 * @example
 * ```ts
 * const production = config.env === 'production'
 * const oauthConfig = loadOAuthConfig(process.env, { production, logger })
 * ```
 */
export function loadOAuthConfig(env: Env, options: LoadOAuthConfigOptions): OAuthConfig {
  const parsed = parseEnv(schema(options.production), env, 'OAuth configuration')
  const issuer = normalizeIssuer(parsed.APP_URL ?? options.fallbackUrl ?? 'http://localhost:3000')
  if (!issuer) {
    throw new ConfigError({ APP_URL: 'expected an absolute http(s) origin' }, 'OAuth configuration')
  }
  if (parsed.MCP_TOKEN_SECRET) {
    return { secret: new Secret(parsed.MCP_TOKEN_SECRET), issuer, secretGenerated: false }
  }
  options.logger?.warn(
    'MCP_TOKEN_SECRET is not set: using a random secret for this process only. Access tokens ' +
      'stop working when it restarts; set MCP_TOKEN_SECRET (32+ random characters) to keep them.',
  )
  return {
    secret: new Secret(randomBytes(32).toString('base64url')),
    issuer,
    secretGenerated: true,
  }
}
