import { z } from 'zod'
import { type Env, envUrl, parseEnv } from '../core/config/index.ts'
import type { Redactor } from '../core/logger.ts'
import { Secret } from '../core/secret.ts'

/** The variables messaging needs; all four are required once messaging is enabled. */
export const MESSAGING_ENV_VARS = [
  'MSG_APP_SECRET',
  'MSG_ACCESS_TOKEN',
  'MSG_PHONE_NUMBER_ID',
  'MSG_VERIFY_TOKEN',
] as const

export const DEFAULT_GRAPH_API_URL = 'https://graph.facebook.com'
/** The Graph API version kiln speaks. */
export const GRAPH_API_VERSION = 'v23.0'

export const messagingEnvSchema = z.object({
  MSG_APP_SECRET: z.string().min(8, 'expected the app secret from the provider dashboard'),
  MSG_ACCESS_TOKEN: z.string().min(8, 'expected a permanent system-user access token'),
  MSG_PHONE_NUMBER_ID: z
    .string()
    .regex(/^\d+$/, 'expected the numeric id of the sending phone number (not the number)'),
  MSG_VERIFY_TOKEN: z.string().min(8, 'expected a random string of at least 8 characters'),
  MSG_GRAPH_API_URL: envUrl('expected an absolute http(s) URL', ['http:', 'https:']).optional(),
})

/** What `new MessagingConfig()` takes: the credentials as `Secret`s or strings. */
export interface MessagingConfigInput {
  appSecret: Secret | string
  accessToken: Secret | string
  verifyToken: Secret | string
  phoneNumberId: string
  /** Base URL of the Graph API; the provider's by default. */
  graphApiUrl?: string | undefined
}

/**
 * Messaging configuration, read once at start-up. The three secrets are `Secret`s: the object
 * prints, logs and serializes with `<redacted>` in their place; `reveal()` reads one where it
 * is used (the send's header, the webhook's signature check, the handshake).
 */
export class MessagingConfig {
  /** Signs and verifies webhook bodies (HMAC-SHA256). */
  readonly appSecret: Secret
  /** Authenticates sends to the Graph API. */
  readonly accessToken: Secret
  /** Answers the provider's subscription handshake. */
  readonly verifyToken: Secret
  readonly phoneNumberId: string
  /** Base URL of the Graph API without a trailing slash. */
  readonly graphApiUrl: string

  constructor(input: MessagingConfigInput) {
    for (const key of ['appSecret', 'accessToken', 'verifyToken', 'phoneNumberId'] as const) {
      const value = input[key]
      if (!(value instanceof Secret) && (typeof value !== 'string' || value.length === 0)) {
        throw new TypeError(`MessagingConfig: ${key} is required`)
      }
    }
    this.appSecret = Secret.from(input.appSecret)
    this.accessToken = Secret.from(input.accessToken)
    this.verifyToken = Secret.from(input.verifyToken)
    this.phoneNumberId = input.phoneNumberId
    this.graphApiUrl = (input.graphApiUrl ?? DEFAULT_GRAPH_API_URL).replace(/\/+$/, '')
  }

  /** The three secrets, e.g. to scrub them from a provider's text with `redactSecrets`. */
  secrets(): Secret[] {
    return [this.appSecret, this.accessToken, this.verifyToken]
  }
}

/** Options of `loadMessagingConfig`. */
export interface LoadMessagingConfigOptions {
  /** Receives the secret values, so no log line can ever carry them. */
  redactor?: Redactor
}

/**
 * Reads `MSG_APP_SECRET`, `MSG_ACCESS_TOKEN`, `MSG_PHONE_NUMBER_ID`, `MSG_VERIFY_TOKEN` and the
 * optional `MSG_GRAPH_API_URL`. Throws a ConfigError naming every missing or bad variable.
 * @example
 * ```ts
 * const messagingConfig = loadMessagingConfig(process.env, { redactor })
 * ```
 */
export function loadMessagingConfig(
  env: Env = process.env,
  options: LoadMessagingConfigOptions = {},
): MessagingConfig {
  const parsed = parseEnv(messagingEnvSchema, env, 'Messaging is not configured')
  options.redactor?.add(parsed.MSG_APP_SECRET, parsed.MSG_ACCESS_TOKEN, parsed.MSG_VERIFY_TOKEN)
  return new MessagingConfig({
    appSecret: parsed.MSG_APP_SECRET,
    accessToken: parsed.MSG_ACCESS_TOKEN,
    verifyToken: parsed.MSG_VERIFY_TOKEN,
    phoneNumberId: parsed.MSG_PHONE_NUMBER_ID,
    graphApiUrl: parsed.MSG_GRAPH_API_URL,
  })
}

/** Which of the four required variables are set (non-empty) and which are missing. */
export function messagingEnvStatus(env: Env = process.env): {
  present: string[]
  missing: string[]
} {
  const present: string[] = []
  const missing: string[] = []
  for (const name of MESSAGING_ENV_VARS) (env[name] ? present : missing).push(name)
  return { present, missing }
}

/** True when all four variables are set: the switch that enables messaging in an app. */
export function isMessagingConfigured(env: Env = process.env): boolean {
  return messagingEnvStatus(env).missing.length === 0
}
