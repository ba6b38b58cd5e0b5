import { inspect } from 'node:util'

const REDACTED = '<redacted>'

/**
 * A secret configuration value (the purge token). It prints as `<redacted>` everywhere:
 * `String()`, template strings, `JSON.stringify`, `util.inspect`, `console.log` and pino.
 * `reveal()` is the one way to read it, at the point it goes into a request header.
 */
export class Secret {
  readonly #value: string

  constructor(value: string) {
    this.#value = value
  }

  reveal(): string {
    return this.#value
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
