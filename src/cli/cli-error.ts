/** A failure the user can fix (bad argument, unreachable database): printed as one message, exit 1. */
export class CliError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'CliError'
  }
}
