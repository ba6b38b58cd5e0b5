export { CliError } from './cli-error.ts'
export { createProgram } from './program.ts'
