import { ValidationError } from '../../core/errors.ts'

/** The page a list request asks for, validated. */
export interface PageQuery {
  page: number
  perPage: number
  /** Rows to skip: `(page - 1) * perPage`. */
  offset: number
}

export interface PageQueryOptions {
  /** `per_page` when the query has none. */
  defaultPerPage?: number
  /** Larger `per_page` values are lowered to this. */
  maxPerPage?: number
}

export interface PageMeta {
  current_page: number
  per_page: number
  total: number
  last_page: number
  /** Position of the first record on this page (1-based); 0 when the page is empty. */
  from: number
  /** Position of the last record on this page; 0 when the page is empty. */
  to: number
}

export interface PageLinks {
  first: string
  last: string
  prev: string | null
  next: string | null
}

/** The list envelope: `{ data, meta, links }`. */
export interface Paginated<T> {
  data: T[]
  meta: PageMeta
  links: PageLinks
}

export const DEFAULT_PER_PAGE = 15
export const MAX_PER_PAGE = 100

const digits = /^[0-9]+$/

/**
 * Reads `page` and `per_page` from a query. Both default (1 and 15); `per_page` is capped at
 * `maxPerPage` (100), however large it is. Anything that is not an integer of at least 1, or a
 * page beyond the last one a safe offset can reach, fails with a 422 naming the parameter.
 */
export function parsePageQuery(
  query: Record<string, string | undefined>,
  { defaultPerPage = DEFAULT_PER_PAGE, maxPerPage = MAX_PER_PAGE }: PageQueryOptions = {},
): PageQuery {
  const errors: Record<string, string[]> = {}
  const page = readPositive(query.page, 1, 'page', errors)
  // Capped before any arithmetic: `per_page=9007199254740993` is simply "as many as allowed".
  const perPage = Math.min(
    readPositive(query.per_page, defaultPerPage, 'per_page', errors),
    maxPerPage,
  )
  const lastReachable = Math.floor(Number.MAX_SAFE_INTEGER / perPage) + 1
  if (errors.page === undefined && page > lastReachable) {
    errors.page = [`must be at most ${lastReachable}`]
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors)
  return { page, perPage, offset: (page - 1) * perPage }
}

/** A positive integer of any size; beyond a safe integer it is returned as Infinity. */
function readPositive(
  raw: string | undefined,
  fallback: number,
  name: string,
  errors: Record<string, string[]>,
): number {
  const value = readPageNumber(raw, fallback)
  if (typeof value === 'number') return value
  errors[name] = [value]
  return fallback
}

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

/**
 * Wraps one page of records in the list envelope. Links are relative to `path` (the request
 * path, e.g. `/api/v1/posts`) as `?page=<n>`; a non-default `per_page` is carried along so
 * following `next` keeps the page size. `prev` and `next` are null at the ends.
 */
export function paginated<T>(
  data: T[],
  query: PageQuery,
  total: number,
  path: string,
  { defaultPerPage = DEFAULT_PER_PAGE }: Pick<PageQueryOptions, 'defaultPerPage'> = {},
): Paginated<T> {
  const { page, perPage, offset } = query
  const lastPage = Math.max(1, Math.ceil(total / perPage))
  const suffix = perPage === defaultPerPage ? '' : `&per_page=${perPage}`
  return {
    data,
    meta: {
      current_page: page,
      per_page: perPage,
      total,
      last_page: lastPage,
      from: data.length === 0 ? 0 : offset + 1,
      to: data.length === 0 ? 0 : offset + data.length,
    },
    links: {
      first: pageLink(path, 1, suffix),
      last: pageLink(path, lastPage, suffix),
      prev: page > 1 ? pageLink(path, Math.min(page - 1, lastPage), suffix) : null,
      next: page < lastPage ? pageLink(path, page + 1, suffix) : null,
    },
  }
}

// A module function rather than a closure per call: paginated runs on every list request.
function pageLink(path: string, page: number, suffix: string): string {
  return `${path}?page=${page}${suffix}`
}
