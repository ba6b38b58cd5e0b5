import { createInterface, type Interface } from 'node:readline'
import { confirm, isCancel } from '@clack/prompts'
import { CliError } from '../cli-error.ts'

let piped: { lines: Interface; next: AsyncIterator<string>; answered: number } | undefined
/** Standard input ended before its first line: a run from a script, answered by defaults. */
let noInput = false

/** The next line of a piped standard input, or undefined once it has ended. */
async function nextLine(): Promise<string | undefined> {
  if (!piped) {
    const lines = createInterface({ input: process.stdin, terminal: false })
    piped = { lines, next: lines[Symbol.asyncIterator](), answered: 0 }
  }
  const { value, done } = await piped.next.next()
  if (!done) piped.answered++
  return done ? undefined : value
}

/** Lets the process end: the piped reader holds standard input open while it exists. */
export function closePromptInput(): void {
  piped?.lines.close()
  piped = undefined
  noInput = false
}

/**
 * A yes/no question of `init` and `make:api`: the terminal prompt on a terminal. Off a terminal
 * (a script, a CI step) the question is printed and one line of standard input answers it (`y`
 * or `yes` is yes, `n` or `no` is no, an empty line the default). Standard input with nothing on
 * it at all (`< /dev/null`, a closed pipe) answers every question with its default, as a
 * non-interactive run of Laravel's or Adonis's commands does; input that ends partway through
 * the answers is an error saying to pass `--yes`, since the missing answers were meant.
 */
export async function askYesNo(message: string, fallback = false): Promise<boolean> {
  if (process.stdin.isTTY) {
    const answer = await confirm({ message, initialValue: fallback })
    return !isCancel(answer) && answer === true
  }
  process.stdout.write(`${message} ${fallback ? '[Y/n]' : '[y/N]'} `)
  const line = noInput ? undefined : await nextLine()
  if (line === undefined) {
    if (!noInput && (piped?.answered ?? 0) > 0) {
      process.stdout.write('\n')
      throw new CliError('No answer on standard input: pass --yes to write without questions')
    }
    noInput = true
    process.stdout.write(`${fallback ? 'yes' : 'no'} (no input: the default)\n`)
    return fallback
  }
  if (/^\s*$/.test(line)) return fallback
  return /^\s*y(es)?\s*$/i.test(line)
}
