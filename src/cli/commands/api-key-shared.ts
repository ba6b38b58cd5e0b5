import { KilnError } from '../../core/errors.ts'
import { CliError } from '../cli-error.ts'

/**
 * Turns a failure of an API-key command into one clear line: a missing `api_keys` table says
 * to migrate; kiln's own input errors keep their message.
 */
export function apiKeyCommandError(error: unknown, description: string): Error {
  if (error instanceof CliError) return error
  if (error instanceof KilnError && error.status < 500) return new CliError(error.message)
  if (isMissingTable(error)) {
    return new CliError(`${description} has no api_keys table yet: run \`kilnjs migrate\` first`, {
      cause: error,
    })
  }
  return error instanceof Error ? error : new Error(String(error))
}

function isMissingTable(error: unknown): boolean {
  let current: unknown = error
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code
    if (
      code === '42P01' ||
      /no such table: api_keys|relation "api_keys" does not exist/.test(current.message)
    ) {
      return true
    }
    current = current.cause
  }
  return false
}

export function formatTime(date: Date | null): string {
  return date === null ? '—' : date.toISOString().replace(/\.\d{3}Z$/, 'Z')
}
