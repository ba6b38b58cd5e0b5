import { type DestinationStream, type Logger as PinoLogger, pino } from 'pino'

export type Logger = PinoLogger

/** Shapes of secrets kiln mints: raw API keys, JWTs and bearer credentials. */
const SECRET_PATTERNS: RegExp[] = [
  /\bkl_(?:live|test)_[A-Za-z0-9]{43}\b/g,
  /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g,
  /(Bearer\s+)[^\s"',]+/gi,
]

const REDACTED = '<redacted>'

/**
 * Scrubs secrets from text: every value registered with `add` (app secrets, tokens from
 * configuration) and every string shaped like a kiln API key, a JWT or a bearer credential.
 * It runs on each serialized log line, so a secret that slips into a message or an error's
 * cause is still never written.
 */
export class Redactor {
  readonly #values = new Set<string>()

  add(...values: (string | undefined)[]): this {
    for (const value of values) {
      // Very short values would scrub ordinary words; configuration validates real secrets' length.
      if (value && value.length >= 6) this.#values.add(value)
    }
    return this
  }

  scrub(text: string): string {
    let out = text
    for (const value of this.#values) {
      if (out.includes(value)) out = out.split(value).join(REDACTED)
    }
    for (const pattern of SECRET_PATTERNS) {
      out = out.replace(pattern, (match, bearer?: string) =>
        typeof bearer === 'string' && /^Bearer/i.test(match) ? `${bearer}${REDACTED}` : REDACTED,
      )
    }
    return out
  }
}

export interface LoggerOptions {
  level?: string
  redactor?: Redactor
  /** Where lines go; standard output by default. Tests pass a capturing stream. */
  destination?: DestinationStream
  name?: string
}

/** Keys whose values are never logged, wherever they appear in a logged object. */
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
]

export function createLogger(options: LoggerOptions = {}): Logger {
  const redactor = options.redactor ?? new Redactor()
  return pino(
    {
      name: options.name,
      level: options.level ?? 'info',
      redact: { paths: REDACTED_PATHS, censor: REDACTED },
      hooks: {
        streamWrite: (line) => redactor.scrub(line),
      },
    },
    options.destination ?? pino.destination({ dest: 1, sync: false }),
  )
}

/** A logger that drops everything: for tests and benchmarks that do not read logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' })
}
