import { Command } from 'commander'
import { commands } from './commands/index.ts'

/** The `kiln` program with every command registered. */
export function createProgram(): Command {
  const program = new Command('kilnjs')
    .description('kiln: REST APIs, OAuth for MCP, messaging and storage for TypeScript back ends')
    .showHelpAfterError()
  for (const register of commands) register(program)
  return program
}
