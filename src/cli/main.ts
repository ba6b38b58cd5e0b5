import '../core/check-peers.ts'
import pc from 'picocolors'
import { ConfigError } from '../core/config/index.ts'
import { MissingPackageError } from '../core/optional-package.ts'
import { CliError } from './cli-error.ts'
import { createProgram } from './program.ts'

try {
  await createProgram().parseAsync(process.argv)
} catch (error) {
  // Configuration, usage and a missing optional package are one clear message, never a stack.
  if (
    error instanceof ConfigError ||
    error instanceof CliError ||
    error instanceof MissingPackageError
  ) {
    console.error(pc.red(error.message))
    process.exit(1)
  }
  throw error
}
