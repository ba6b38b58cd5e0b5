/**
 * A return path that stays on this site, or undefined: it must start with one `/` and not
 * `//` or `/\` (both mean another host to browsers), carry no scheme, and have no control
 * characters or backslashes. Login pages use it for `?return_to=`.
 * @see RFC 9700 §4.11
 */
export function safeReturnTo(value: string | null | undefined): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > 4096) return undefined
  if (!value.startsWith('/')) return undefined
  if (value.startsWith('//') || value.includes('\\')) return undefined
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
  if (/[\u0000-\u001f\u007f\s]/.test(value)) return undefined
  try {
    const base = 'http://return-to.invalid'
    const url = new URL(value, base)
    if (url.origin !== base) return undefined
  } catch {
    return undefined
  }
  return value
}
