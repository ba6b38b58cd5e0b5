import { createInterface, type Interface } from 'node:readline'
import { confirm, isCancel } from '@clack/prompts'
import { CliError } from '../cli-error.ts'

let piped: { lines: Interface; next: AsyncIterator<string> } | undefined

/** The next line of a piped standard input, or undefined once it has ended. */
async function nextLine(): Promise<string | undefined> {
  if (!piped) {
    const lines = createInterface({ input: process.stdin, terminal: false })
    piped = { lines, next: lines[Symbol.asyncIterator]() }
  }
  const { value, done } = await piped.next.next()
  return done ? undefined : value
}

/** Lets the process end: the piped reader holds standard input open while it exists. */
export function closePromptInput(): void {
  piped?.lines.close()
  piped = undefined
}

/**
 * A yes/no question of `make:api`: the terminal prompt on a terminal; on piped standard input
 * (a script, a CI step) the question is printed and one line answers it (`y` or `yes` is yes,
 * anything else no). Input that ends before the answer is an error saying to pass `--yes`.
 */
export async function askYesNo(message: string): Promise<boolean> {
  if (process.stdin.isTTY) {
    const answer = await confirm({ message, initialValue: false })
    return !isCancel(answer) && answer === true
  }
  process.stdout.write(`${message} [y/N] `)
  const line = await nextLine()
  if (line === undefined) {
    process.stdout.write('\n')
    throw new CliError('No answer on standard input: pass --yes to write without questions')
  }
  return /^\s*y(es)?\s*$/i.test(line)
}
