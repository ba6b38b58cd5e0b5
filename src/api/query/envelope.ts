import type { countRecords } from './count.ts'
import { cursorSecretOf, encodeCursor } from './cursor.ts'
import type { ListQueryDefinition } from './definition.ts'
import type { CountStrategy } from './limits.ts'
import { exactTimestamp, type ListQueryPlan } from './plan.ts'
import type { Row } from './types.ts'
import { toJsonValue } from './values.ts'

/**
 * The `meta` of a list answer. Offset pages carry `current_page`, `last_page`, `from` and `to`;
 * cursor pages carry `next_cursor` and `prev_cursor` instead.
 */
export interface ListMeta {
  /** The page answered (offset pages). */
  current_page?: number
  per_page: number
  /** Matching records, as `count=` asked (exact by default); `null` with `count=none`. */
  total: number | null
  /** The last page (1 when nothing matches); `null` when `total` is. Offset pages. */
  last_page?: number | null
  /** The 1-based position of the page's first record; 0 on an empty page. Offset pages. */
  from?: number
  /** The position of the page's last record; 0 on an empty page. Offset pages. */
  to?: number
  /** Only when `count=` was given or in cursor mode: what `total` is. */
  count?: CountStrategy
  /** The cursor of the next page, `null` at the end (cursor pages). */
  next_cursor?: string | null
  /** The cursor of the page before, `null` at the start (cursor pages). */
  prev_cursor?: string | null
}

/**
 * The `links` of a list answer: relative URLs that keep the request's other parameters
 * (filters, sort, fields, a `per_page` other than the default), so following `next` keeps them.
 */
export interface ListLinks {
  first: string
  /** The last page; `null` when the total is not counted. Offset pages only. */
  last?: string | null
  /** `null` on the first page. */
  prev: string | null
  /** `null` on the last page. */
  next: string | null
}

/**
 * What `runListQuery` answers and a list route sends as is: `{ data, meta, links }`, the
 * envelope of docs/rest-api/endpoints.md.
 */
export interface ListEnvelope {
  /** The page's records, with their included relations. */
  data: Record<string, unknown>[]
  meta: ListMeta
  links: ListLinks
}

/** A page by number: its meta (total and last page when counted) and its links. */
export function offsetEnvelope(
  plan: ListQueryPlan,
  rows: Row[],
  data: Record<string, unknown>[],
  counted: Awaited<ReturnType<typeof countRecords>>,
  links: LinkBuilder,
  countGiven: boolean,
): ListEnvelope {
  const total = counted.total
  const lastPage = total === null ? null : Math.max(1, Math.ceil(total / plan.perPage))
  const meta: ListMeta = {
    current_page: plan.page,
    per_page: plan.perPage,
    total,
    last_page: lastPage,
    from: data.length === 0 ? 0 : plan.offset + 1,
    to: data.length === 0 ? 0 : plan.offset + data.length,
    ...(countGiven ? { count: counted.kind } : {}),
  }
  const more = lastPage === null ? rows.length === plan.perPage : plan.page < lastPage
  return {
    data,
    meta,
    links: {
      first: links.page(1),
      last: lastPage === null ? null : links.page(lastPage),
      prev:
        plan.page > 1
          ? links.page(lastPage === null ? plan.page - 1 : Math.min(plan.page - 1, lastPage))
          : null,
      next: more ? links.page(plan.page + 1) : null,
    },
  }
}

/** A page by cursor: the cursors of the pages before and after, and their links. */
export function cursorEnvelope(
  definition: ListQueryDefinition,
  plan: ListQueryPlan,
  rows: Row[],
  data: Record<string, unknown>[],
  hasMore: boolean,
  total: number | null,
  kind: CountStrategy,
  links: LinkBuilder,
): ListEnvelope {
  const at = (row: Row | undefined, direction: 'next' | 'prev') => {
    if (!row) return null
    const values = plan.sort.map(({ field }, i) =>
      exactTimestamp(definition, field) ? row[`kiln_cursor_${i}`] : toJsonValue(row[field.key]),
    )
    return encodeCursor({ values, direction }, plan.fingerprint, cursorSecretOf(definition))
  }
  const backwards = plan.cursor?.direction === 'prev'
  const next = backwards || hasMore ? at(rows.at(-1), 'next') : null
  const prev = plan.cursor && (!backwards || hasMore) ? at(rows[0], 'prev') : null
  return {
    data,
    meta: { per_page: plan.perPage, total, count: kind, next_cursor: next, prev_cursor: prev },
    links: {
      first: links.cursor(''),
      prev: prev === null ? null : links.cursor(prev),
      next: next === null ? null : links.cursor(next),
    },
  }
}

/** Relative links that keep the request's other parameters (filters, sort, fields…). */
export class LinkBuilder {
  readonly #path: string
  /** `&per_page=…` when not the default, then the other parameters, encoded once for every link. */
  readonly #rest: string

  constructor(url: URL, defaultPerPage: number) {
    this.#path = url.pathname
    let rest = ''
    const perPage = url.searchParams.get('per_page')
    if (perPage !== null && Number(perPage) !== defaultPerPage)
      rest += `&per_page=${encode(perPage)}`
    for (const [key, value] of url.searchParams) {
      if (key !== 'page' && key !== 'per_page' && key !== 'cursor')
        rest += `&${encode(key)}=${encode(value)}`
    }
    this.#rest = rest
  }

  page(n: number): string {
    return `${this.#path}?page=${n}${this.#rest}`
  }

  cursor(value: string): string {
    return `${this.#path}?cursor=${encode(value)}${this.#rest}`
  }
}

/** Encodes a query component but keeps `[`, `]` and `,` readable (they are valid in a query). */
function encode(text: string): string {
  const encoded = encodeURIComponent(text)
  if (!encoded.includes('%')) return encoded
  return encoded.replace(/%5B/g, '[').replace(/%5D/g, ']').replace(/%2C/g, ',')
}
