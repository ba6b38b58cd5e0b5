import '../core/check-peers.ts'
import pc from 'picocolors'
import { ConfigError } from '../core/config/index.ts'
import { CliError } from './cli-error.ts'
import { createProgram } from './program.ts'

try {
  await createProgram().parseAsync(process.argv)
} catch (error) {
  // Configuration and usage problems are one clear message, never a stack trace.
  if (error instanceof ConfigError || error instanceof CliError) {
    console.error(pc.red(error.message))
    process.exit(1)
  }
  throw error
}
