/**
 * Control and format characters: C0/C1 controls, bidi embeddings, overrides and isolates
 * (U+202A–U+202E, U+2066–U+2069), zero-width characters (U+200B–U+200F, U+2060, U+FEFF) and the
 * rest of Unicode's `Cf` class. A client names itself; these let it make that name read
 * differently from what it is ("Good‮exe.txt").
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\u2028\u2029]/gu

/** A client-supplied name as it may be shown to a person: invisible controls removed, trimmed. */
export function displayName(value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  return value.replace(INVISIBLE, '').replace(/\s+/g, ' ').trim() || undefined
}
