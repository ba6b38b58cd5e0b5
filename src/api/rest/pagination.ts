/** `per_page` when a list query has none, and the most it may ask for. */
export const DEFAULT_PER_PAGE = 15
export const MAX_PER_PAGE = 100

const digits = /^[0-9]+$/

/**
 * `page` / `per_page` from a query string: an integer of at least 1, of any size (beyond a
 * safe integer it is Infinity, so a huge `per_page` is capped, not refused), or the message
 * saying what is wrong with it.
 */
export function readPageNumber(raw: string | undefined, fallback: number): number | string {
  if (raw === undefined) return fallback
  if (!digits.test(raw)) return 'must be an integer'
  const value = Number(raw)
  if (value < 1) return 'must be at least 1'
  return Number.isSafeInteger(value) ? value : Number.POSITIVE_INFINITY
}
