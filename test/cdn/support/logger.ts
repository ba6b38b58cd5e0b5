import { createLogger, type Logger, Redactor } from 'kilnjs/core'

/** A real kiln logger whose lines are kept for assertions. */
export function capturingLogger(redactor = new Redactor()): { logger: Logger; lines: string[] } {
  const lines: string[] = []
  const logger = createLogger({
    level: 'debug',
    redactor,
    destination: { write: (line: string) => void lines.push(line) },
  })
  return { logger, lines }
}
