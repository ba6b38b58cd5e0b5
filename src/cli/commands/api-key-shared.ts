import { isKilnError } from '../../core/errors.ts'
import { missingTable } from '../../core/missing-table.ts'
import { CliError } from '../cli-error.ts'

/**
 * Turns a failure of an API-key command into one clear line: a missing `api_keys` table says
 * to migrate; kiln's own input errors keep their message.
 */
export function apiKeyCommandError(error: unknown, description: string): Error {
  if (error instanceof CliError) return error
  if (isKilnError(error) && error.status < 500) return new CliError(error.message)
  if (missingTable(error) !== undefined) {
    return new CliError(`${description} has no api_keys table yet: run \`kilnjs migrate\` first`, {
      cause: error,
    })
  }
  return error instanceof Error ? error : new Error(String(error))
}

export function formatTime(date: Date | null): string {
  return date === null ? '—' : date.toISOString().replace(/\.\d{3}Z$/, 'Z')
}
