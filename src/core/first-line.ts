/**
 * The first line of an error's message (or of any value as text): what a one-line report of a
 * failure shows, without the stack or the detail a driver puts on the lines after.
 */
export function firstLineOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message.split('\n')[0] ?? message
}
