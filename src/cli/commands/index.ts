import type { Command } from 'commander'

/** Each command module exports one function that adds its command to the program. */
export type RegisterCommand = (program: Command) => void

export const commands: RegisterCommand[] = []
