import { inspect } from 'node:util'
import { constantTimeEqual } from './http/constant-time.ts'

const REDACTED = '<redacted>'

/**
 * A secret value (an app secret, a token, a signing key): the one way kiln holds secrets. It
 * prints as `<redacted>` everywhere: `String()`, template strings, `JSON.stringify`,
 * `util.inspect`, `console.log` and pino. `reveal()` is the one way to read it, at the point
 * it is used (a request header, a signature); `equals()` compares in constant time.
 */
export class Secret {
  readonly #value: string

  constructor(value: string) {
    if (typeof value !== 'string') throw new TypeError('Secret: expected a string')
    this.#value = value
  }

  /** A `Secret` as is, or a string wrapped in one (options accept either). */
  static from(value: Secret | string): Secret {
    return value instanceof Secret ? value : new Secret(value)
  }

  reveal(): string {
    return this.#value
  }

  /** Whether `candidate` is this secret, in constant time. */
  equals(candidate: string | Secret): boolean {
    return constantTimeEqual(
      this.#value,
      candidate instanceof Secret ? candidate.reveal() : candidate,
    )
  }

  toString(): string {
    return REDACTED
  }

  toJSON(): string {
    return REDACTED
  }

  [inspect.custom](): string {
    return REDACTED
  }

  [Symbol.toPrimitive](): string {
    return REDACTED
  }
}

/** The text of a secret given as a `Secret` or a plain string. */
export function revealSecret(value: Secret | string): string {
  return value instanceof Secret ? value.reveal() : value
}

/**
 * `text` with every secret's value replaced by `<redacted>`: for text that comes from outside
 * (a provider's error quoting the credential it refused, a queue's error message).
 */
export function redactSecrets(text: string, secrets: Iterable<Secret | undefined>): string {
  let out = text
  for (const secret of secrets) {
    const value = secret?.reveal()
    if (value && out.includes(value)) out = out.split(value).join(REDACTED)
  }
  return out
}
