import { inspect } from 'node:util'
import { z } from 'zod'
import { type Env, envUrl, parseEnv } from '../core/config/index.ts'
import type { Redactor } from '../core/logger.ts'

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

export interface MessagingConfigInput {
  appSecret: string
  accessToken: string
  verifyToken: string
  phoneNumberId: string
  /** Base URL of the Graph API; the provider's by default. */
  graphApiUrl?: string | undefined
}

interface Secrets {
  appSecret: string
  accessToken: string
  verifyToken: string
}

// Kept outside the objects: a copy (a logger's redaction clone, a spread) carries no secret.
const SECRETS = new WeakMap<object, Secrets>()
const REDACTED: Secrets = {
  appSecret: '<redacted>',
  accessToken: '<redacted>',
  verifyToken: '<redacted>',
}

function secretsOf(config: object): Secrets {
  return SECRETS.get(config) ?? REDACTED
}

/**
 * Messaging configuration, read once at start-up. The secrets are reachable through getters
 * only: the object prints, logs and serializes with `<redacted>` in their place.
 */
export class MessagingConfig {
  readonly phoneNumberId: string
  /** Base URL of the Graph API without a trailing slash. */
  readonly graphApiUrl: string

  constructor(input: MessagingConfigInput) {
    for (const key of ['appSecret', 'accessToken', 'verifyToken', 'phoneNumberId'] as const) {
      if (typeof input[key] !== 'string' || input[key].length === 0) {
        throw new TypeError(`MessagingConfig: ${key} is required`)
      }
    }
    SECRETS.set(this, {
      appSecret: input.appSecret,
      accessToken: input.accessToken,
      verifyToken: input.verifyToken,
    })
    this.phoneNumberId = input.phoneNumberId
    this.graphApiUrl = (input.graphApiUrl ?? DEFAULT_GRAPH_API_URL).replace(/\/+$/, '')
  }

  /** Signs and verifies webhook bodies (HMAC-SHA256). */
  get appSecret(): string {
    return secretsOf(this).appSecret
  }

  /** Authenticates sends to the Graph API. */
  get accessToken(): string {
    return secretsOf(this).accessToken
  }

  /** Answers the provider's subscription handshake. */
  get verifyToken(): string {
    return secretsOf(this).verifyToken
  }

  /** The secret values, e.g. to scrub them from text. */
  secrets(): string[] {
    const { appSecret, accessToken, verifyToken } = secretsOf(this)
    return [appSecret, accessToken, verifyToken]
  }

  toJSON(): Record<string, string> {
    return {
      appSecret: '<redacted>',
      accessToken: '<redacted>',
      verifyToken: '<redacted>',
      phoneNumberId: this.phoneNumberId,
      graphApiUrl: this.graphApiUrl,
    }
  }

  [inspect.custom](): string {
    return `MessagingConfig ${inspect(this.toJSON())}`
  }
}

export interface LoadMessagingConfigOptions {
  /** Receives the secret values, so no log line can ever carry them. */
  redactor?: Redactor
}

/**
 * Reads `MSG_APP_SECRET`, `MSG_ACCESS_TOKEN`, `MSG_PHONE_NUMBER_ID`, `MSG_VERIFY_TOKEN` and the
 * optional `MSG_GRAPH_API_URL`. Throws a ConfigError naming every missing or bad variable.
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
