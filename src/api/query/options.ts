import type { Column, Table } from 'drizzle-orm'
import type { Secret } from '../../core/secret.ts'
import type { RowFilter } from '../../db/models/policy.ts'
import type { QueryLimits } from './limits.ts'

/**
 * What an app declares of a list query (`defineListQuery`, `defineResource`): its options and
 * the relations it names. definition.ts resolves them, checked, into the definition.
 */

/** A relation as `belongsTo` / `hasMany` declare it. */
export interface RelationSpec {
  kind: 'belongs-to' | 'has-many'
  table: Table
  /** The column of the listed table the relation starts from. */
  local: Column
  /** The column of the related table it matches. */
  remote: Column
  /** has-many: most related records returned per record. */
  limit: number
}

/**
 * `include=<name>` of a record that references another: `belongsTo(users, posts.authorId, users.id)`
 * attaches the post's author (or null). One query per page, by the keys on the page.
 */
export function belongsTo(table: Table, foreignKey: Column, ownerKey: Column): RelationSpec {
  return { kind: 'belongs-to', table, local: foreignKey, remote: ownerKey, limit: 1 }
}

/**
 * `include=<name>` of the records that reference this one: `hasMany(comments, comments.postId,
 * posts.id, { limit: 10 })` attaches up to `limit` comments per post (oldest first by primary
 * key), all of them in one query per page.
 */
export function hasMany(
  table: Table,
  foreignKey: Column,
  localKey: Column,
  { limit = 10 }: { limit?: number } = {},
): RelationSpec {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new TypeError('hasMany: limit must be ≥ 1')
  return { kind: 'has-many', table, local: localKey, remote: foreignKey, limit }
}

/** How `search=` matches. */
export type SearchMode =
  /** `ILIKE '%term%'` on Postgres, `LIKE` on SQLite, over the search columns (no index). */
  | 'like'
  /** Postgres full-text search: `to_tsvector(...) @@ websearch_to_tsquery(...)`, GIN-indexable. */
  | 'tsvector'
  /** SQLite FTS5: an external-content FTS5 table of that name indexes the search columns. */
  | { fts5: string }

/**
 * Options of `defineListQuery`: what a resource's list lets a request filter, sort, search,
 * include and aggregate, beyond which it answers 422. Every list is fenced by `limits` too.
 * `Row` is the table's selected row, what `resource` turns into a record.
 */
export interface ListQueryOptions<Row = Record<string, unknown>, Rec extends object = object> {
  /**
   * The scope a key needs to read this resource (default `<resource>:read`, e.g. `users:read`):
   * `include=` of it from another resource needs it too.
   */
  readScope?: string
  /**
   * Fields records show and `fields=` may pick (default: every non-credential column): on
   * every surface, whatever `resource` returns (a column left out here is left out there).
   */
  fields?: readonly string[]
  /**
   * Fields `filter[...]` accepts (default: the comparable ones of `fields`, with their array
   * and JSON columns).
   */
  filter?: readonly string[]
  /** Fields `sort=` accepts (default: the comparable ones of `fields`). */
  sort?: readonly string[]
  /**
   * What `GET …/aggregate` may compute, by function: `sum` and `avg` over numeric fields
   * (default: the numeric ones of `sort`), `min` and `max` (default: `sort`), and the fields
   * `group_by=` takes (default: `sort`). `count=*` is always allowed. Credential fields are
   * refused here as in every list.
   */
  aggregate?: {
    sum?: readonly string[]
    avg?: readonly string[]
    min?: readonly string[]
    max?: readonly string[]
    groupBy?: readonly string[]
  }
  /** Text fields `search=` looks in (default: none, so no `search`). */
  search?: readonly string[]
  /** How `search=` matches (default `like`; `tsvector` on Postgres, `{ fts5 }` on SQLite). */
  searchMode?: SearchMode
  /** Text-search configuration of `tsvector` mode (default `simple`). */
  searchLanguage?: string
  /** Relations `include=` accepts, by name. */
  include?: Record<string, RelationSpec>
  /** Order when `sort=` is absent, e.g. `-created_at` (default: primary key ascending). */
  defaultSort?: string
  /** Caps on what one request may ask for, each over `DEFAULT_QUERY_LIMITS`. */
  limits?: Partial<QueryLimits>
  /**
   * Signs cursors (HMAC-SHA256). Without it they are signed with a key derived from the app's
   * key (`setCursorKey(config.appKey)`, APP_KEY), or this process's random key.
   */
  cursorSecret?: Secret | string
  /** `count=estimated` counts exactly below this many estimated rows (default 1,000). */
  estimateThreshold?: number
  /**
   * Turns a full row into its record (names, formats, computed values); a column that `fields`
   * leaves out is taken off what it returns. Records of `fields=` requests are built column by
   * column.
   */
  resource?: (row: Row) => Rec
  /**
   * The rows a caller may read, from the caller (its key): `(key) => ({ where:
   * eq(posts.published, true), key: 'published' })`. Lists keep to them, and so does
   * `include=` of this resource from another one.
   */
  rows?: RowFilter
  /** Further fields that are credentials here: never shown, filtered, sorted or searched. */
  sensitive?: readonly string[]
  /**
   * Fields whose names look like credentials (`*_token`, `*secret*`, …) that this resource
   * shows all the same, one by one. The opt-in is explicit: nothing credential-like is shown
   * by default.
   */
  expose?: readonly string[]
}
