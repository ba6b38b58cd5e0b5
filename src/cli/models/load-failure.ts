import { readFileSync } from 'node:fs'
import { relative } from 'node:path'

/** Where esbuild (under tsx) found a syntax error: its `errors[].location`, line 1-based. */
interface SourceLocation {
  file: string
  line: number
  /** 0-based, as esbuild counts. */
  column: number
  lineText?: string | undefined
}

interface SyntaxProblem {
  text: string
  location: SourceLocation | undefined
}

/** esbuild's formatted message line: `/app/src/schema.ts:3:7: ERROR: Expected identifier …`. */
const MESSAGE_LINE = /^(.+?):(\d+):(\d+): ERROR: (.+)$/

/**
 * Why an app module failed to load, in a few lines a person can act on. A syntax error
 * (esbuild's "Transform failed with 1 error:", whose first line says nothing) becomes each
 * error's file, line, column and text, and the offending source line with a caret under the
 * column; any other failure is its first line.
 */
export function describeLoadFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  const problems = syntaxProblems(error, message)
  if (problems.length === 0) return message.split('\n')[0] ?? message
  return problems.map(describeProblem).join('\n')
}

function syntaxProblems(error: unknown, message: string): SyntaxProblem[] {
  const errors = (error as { errors?: unknown } | null)?.errors
  if (Array.isArray(errors) && errors.length > 0) {
    return errors.map((entry: { text?: unknown; location?: SourceLocation | null }) => ({
      text: String(entry.text ?? 'syntax error'),
      location: entry.location ?? undefined,
    }))
  }
  // tsx passes the message on without esbuild's `errors`: read the same facts from its lines.
  if (!/^Transform failed with \d+ errors?:/.test(message)) return []
  return message
    .split('\n')
    .slice(1)
    .flatMap((line) => {
      const match = MESSAGE_LINE.exec(line.trim())
      if (!match) return []
      const [, file = '', row = '1', column = '0', text = ''] = match
      return [{ text, location: { file, line: Number(row), column: Number(column) } }]
    })
}

function describeProblem({ text, location }: SyntaxProblem): string {
  if (!location) return `syntax error: ${text}`
  const { file, line, column } = location
  const where = `${relative(process.cwd(), file) || file}:${line}:${column + 1}`
  const source = location.lineText ?? sourceLine(file, line)
  if (source === undefined) return `syntax error at ${where}: ${text}`
  const gutter = `${line} | `
  const caret = `${' '.repeat(gutter.length - 2)}| ${' '.repeat(column)}^`
  return `syntax error at ${where}: ${text}\n    ${gutter}${source}\n    ${caret}`
}

function sourceLine(file: string, line: number): string | undefined {
  try {
    return readFileSync(file, 'utf8').split(/\r?\n/)[line - 1]
  } catch {
    return undefined
  }
}
