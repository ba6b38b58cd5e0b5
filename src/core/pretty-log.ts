import pc from 'picocolors'

/** pino's numeric levels, as a person reads them. */
const LEVELS: Record<number, { label: string; color: (text: string) => string }> = {
  10: { label: 'TRACE', color: pc.gray },
  20: { label: 'DEBUG', color: pc.gray },
  30: { label: 'INFO ', color: pc.green },
  40: { label: 'WARN ', color: pc.yellow },
  50: { label: 'ERROR', color: pc.red },
  60: { label: 'FATAL', color: pc.magenta },
}

/** Fields every line has, shown in the prefix or not at all. */
const OMITTED = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'err'])

/**
 * Whether the message already shows a field's value as a word of its own (`GET`, `/keyed`,
 * `200`, `3.1ms`, `key ci-bot`): the short form said it, so the line does not repeat it.
 */
function said(message: string, value: unknown): boolean {
  if (typeof value !== 'string' && typeof value !== 'number') return false
  const text = String(value).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return text !== '' && new RegExp(`(^|\\s)${text}(ms)?(\\s|$)`).test(message)
}

/**
 * One pino JSON line as a line a person reads in a terminal during development:
 * `10:31:02 INFO  GET /api/v1/posts 200 3.1ms key ci-bot`, then the fields the message did not
 * already show as `key=value`, then an error's stack indented below. Runs after secrets were scrubbed from the
 * JSON line, so it prints nothing the JSON would not. A line that is not JSON passes unchanged.
 */
export function prettyLogLine(line: string): string {
  let entry: Record<string, unknown>
  try {
    entry = JSON.parse(line) as Record<string, unknown>
  } catch {
    return line
  }
  const level = LEVELS[entry.level as number] ?? { label: String(entry.level), color: pc.white }
  const time =
    typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11, 19) : ''
  const name = typeof entry.name === 'string' ? `${pc.cyan(entry.name)} ` : ''
  const message = typeof entry.msg === 'string' ? entry.msg : ''
  const fields = Object.entries(entry)
    .filter(([key, value]) => !OMITTED.has(key) && key !== 'name' && !said(message, value))
    .map(
      ([key, value]) =>
        `${pc.dim(`${key}=`)}${typeof value === 'string' ? value : JSON.stringify(value)}`,
    )
  let out = `${pc.dim(time)} ${level.color(level.label)} ${name}${message}`
  if (fields.length > 0) out += `  ${fields.join(' ')}`
  const stack = (entry.err as { stack?: unknown } | undefined)?.stack
  if (typeof stack === 'string') out += `\n${pc.dim(stack.replace(/^/gm, '    '))}`
  return `${out}\n`
}
