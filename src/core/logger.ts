import { type DestinationStream, type Logger as PinoLogger, pino } from 'pino'
import { CREDENTIAL_STEMS, isCredentialField } from './credentials.ts'
import { prettyLogLine } from './pretty-log.ts'
import { Secret } from './secret.ts'

/** kiln's logger: pino's, as `createLogger` makes it. */
export type Logger = PinoLogger

/** Shapes of secrets kiln mints: raw API keys, JWTs and bearer credentials. */
const SECRET_PATTERNS: RegExp[] = [
  /\bkl_(?:live|test)_[A-Za-z0-9]{43}\b/g,
  /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g,
  /(Bearer\s+)[^\s"',]+/gi,
]

const REDACTED = '<redacted>'

/**
 * Keys whose values are never logged, at any depth of a logged object, beside every name the
 * credential rule catches (`isCredentialField`: `otp_secret`, `reset_password_token`,
 * `private_key`, `api_key_hash`…), so a column that never leaves the server through the API
 * never reaches a log line either.
 */
const SECRET_KEYS = new Set(['rawkey', 'raw_key', 'authorization', 'cookie', 'set-cookie'])

/** Whether a logged key's value is a secret. */
function isSecretKey(key: string): boolean {
  return SECRET_KEYS.has(key.toLowerCase()) || isCredentialField(key)
}

/**
 * A line none of whose text could name a secret key skips the pass over its keys: most lines
 * (the access log's) hold none. On an access-log line the pass costs about 12 µs and the
 * whole scrub with this test about 0.5.
 */
const SECRET_KEY_HINT = new RegExp(`${CREDENTIAL_STEMS.source}|raw_?key|authorization|cookie`, 'i')

/** `"key":"…"` or `"key":123` in a JSON line, whatever the nesting; the value is group 3. */
const KEY_VALUE_PATTERN = /"((?:[^"\\]|\\.)+)"(\s*:\s*)("(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*)/g

/**
 * Scrubs secrets from text: every value registered with `add` (app secrets, tokens from
 * configuration) and every string shaped like a kiln API key, a JWT or a bearer credential.
 * It runs on each serialized log line, so a secret that slips into a message or an error's
 * cause is still never written.
 * @example
 * ```ts
 * const redactor = new Redactor().add(process.env.SMTP_PASSWORD)
 * const logger = createLogger({ level: 'info', redactor })
 * ```
 */
export class Redactor {
  readonly #values = new Set<string>()

  add(...secrets: (Secret | string | undefined)[]): this {
    for (const secret of secrets) {
      const value = secret instanceof Secret ? secret.reveal() : secret
      // Very short values would scrub ordinary words; configuration validates real secrets' length.
      if (!value || value.length < 6) continue
      this.#values.add(value)
      // As it appears inside a JSON string (a log line) when it holds quotes or backslashes.
      const escaped = JSON.stringify(value).slice(1, -1)
      if (escaped !== value) this.#values.add(escaped)
    }
    return this
  }

  scrub(text: string): string {
    let out = text
    for (const value of this.#values) {
      if (out.includes(value)) out = out.split(value).join(REDACTED)
    }
    if (SECRET_KEY_HINT.test(out)) {
      out = out.replace(KEY_VALUE_PATTERN, (pair, key: string, colon: string) =>
        isSecretKey(key) ? `"${key}"${colon}"${REDACTED}"` : pair,
      )
    }
    for (const pattern of SECRET_PATTERNS) {
      out = out.replace(pattern, (match, bearer?: string) =>
        typeof bearer === 'string' && /^Bearer/i.test(match) ? `${bearer}${REDACTED}` : REDACTED,
      )
    }
    return out
  }
}

/** Options of `createLogger`. */
export interface LoggerOptions {
  level?: string
  redactor?: Redactor
  /** Where lines go; standard output by default. Tests pass a capturing stream. */
  destination?: DestinationStream
  name?: string
  /**
   * `json` (the default: one JSON object per line, for production log pipelines) or `pretty`
   * (a short coloured line for a person at a terminal; `loadAppConfig` picks it in development
   * on a TTY or with `LOG_FORMAT=pretty`).
   */
  format?: LogFormat
}

/** `json`: one JSON object per line; `pretty`: readable lines for a terminal. */
export type LogFormat = 'json' | 'pretty'

/**
 * pino's own redaction of well-known paths (the line-level pass above catches deeper ones and
 * secrets inside strings).
 */
const REDACTED_PATHS = [
  'password',
  'secret',
  'token',
  'rawKey',
  'accessToken',
  'refreshToken',
  'authorization',
  '*.password',
  '*.secret',
  '*.token',
  '*.rawKey',
  '*.accessToken',
  '*.refreshToken',
  '*.authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.cookie',
]

/**
 * A pino logger with kiln's redaction of credentials and cookies: JSON lines, or readable
 * lines with `format: 'pretty'`.
 * @example
 * ```ts
 * const logger = createLogger({ level: config.logLevel, format: config.logFormat })
 * ```
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const redactor = options.redactor ?? new Redactor()
  return pino(
    {
      name: options.name,
      level: options.level ?? 'info',
      redact: { paths: REDACTED_PATHS, censor: REDACTED },
      hooks: {
        streamWrite:
          options.format === 'pretty'
            ? (line) => prettyLogLine(redactor.scrub(line))
            : (line) => redactor.scrub(line),
      },
    },
    options.destination ?? pino.destination({ dest: 1, sync: false }),
  )
}

/**
 * A logger that drops everything: for tests and benchmarks that do not read logs.
 * @example
 * ```ts
 * const shared = await createSharedState({ logger: silentLogger() })
 * ```
 */
export function silentLogger(): Logger {
  return pino({ level: 'silent' })
}
