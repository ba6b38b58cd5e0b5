import { z } from 'zod'
import { KilnError, messageOf } from '../errors.ts'

/**
 * Configuration is invalid. The message names every bad variable and what it expects,
 * never the values (some are secrets), and is meant to be printed as is: no stack trace.
 * A `KilnError` (`config_invalid`), so a copy of kiln loaded by an app's module is recognised.
 */
export class ConfigError extends KilnError {
  override readonly code = 'config_invalid'
  readonly problems: Record<string, string>

  constructor(problems: Record<string, string>, heading = messageOf('config_invalid')) {
    const entries = Object.entries(problems).map(([name, expected]) => `${name}: ${expected}`)
    // One problem reads best as one line; several as a list under the heading.
    super(
      entries.length === 1
        ? `${heading}: ${entries[0]}`
        : `${heading}:\n${entries.map((line) => `  ${line}`).join('\n')}`,
    )
    this.problems = problems
  }

  /** The variables' names are for the operator: a request that meets one answers a bare 500. */
  override body(): Record<string, unknown> {
    return { error: messageOf('internal_error'), code: 'internal_error' }
  }
}

/** Environment variables, as `process.env` holds them. */
export type Env = Record<string, string | undefined>

/**
 * Parses environment variables with a zod object schema. Empty strings count as unset,
 * as in a `.env` file with `NAME=`. All problems are reported together.
 * @example
 * ```ts
 * import { z } from 'zod'
 *
 * const mail = parseEnv(z.object({ SMTP_URL: z.url() }), process.env, 'Invalid mail configuration')
 * ```
 */
export function parseEnv<Schema extends z.ZodObject>(
  schema: Schema,
  env: Env,
  heading?: string,
): z.output<Schema> {
  const input: Record<string, string> = {}
  for (const key of Object.keys(schema.shape)) {
    const value = env[key]
    if (value !== undefined && value !== '') input[key] = value
  }
  const result = schema.safeParse(input)
  if (result.success) return result.data
  const problems: Record<string, string> = {}
  for (const issue of result.error.issues) {
    const name = String(issue.path[0] ?? '(environment)')
    problems[name] ??=
      issue.code === 'invalid_type' && input[name] === undefined ? 'is required' : issue.message
  }
  throw new ConfigError(problems, heading)
}

/** A boolean variable: `true/false`, `1/0`, `yes/no`, `on/off`. */
export const envBoolean = z.string().transform((value, ctx) => {
  const v = value.trim().toLowerCase()
  if (['true', '1', 'yes', 'on'].includes(v)) return true
  if (['false', '0', 'no', 'off'].includes(v)) return false
  ctx.addIssue({ code: 'custom', message: 'expected true or false' })
  return z.NEVER
})

/**
 * A zod schema for a URL variable with one of `protocols`; `expected` is the message when it is
 * not.
 */
export const envUrl = (expected: string, protocols: string[]) =>
  z.string().refine(
    (value) => {
      try {
        return protocols.includes(new URL(value).protocol)
      } catch {
        return false
      }
    },
    { message: expected },
  )
