import {
  and,
  between,
  type Column,
  eq,
  gt,
  gte,
  inArray,
  isNotNull,
  isNull,
  lt,
  lte,
  ne,
  notInArray,
  or,
  type SQL,
  type SQLWrapper,
  sql,
} from 'drizzle-orm'
import type { ListQueryDefinition, QueryField } from './definition.ts'
import type { FilterClause } from './filters.ts'
import { exactTimestamp, type ListQueryPlan, type SortKey } from './plan.ts'

/**
 * The SQL of a plan, through Drizzle's builders: columns come from the allow-lists, and every
 * value goes through `bind`, which makes it a bound parameter (`bindValues`) or a placeholder
 * of a prepared statement (`Placeholders`, see statement.ts).
 */

/** A value's place in the SQL; `column` encodes it (`mapToDriverValue`), none for text made here. */
export type Bind = (value: unknown, column?: Column) => SQLWrapper

/** Each value as a parameter of this one query, encoded by its column as Drizzle's operators do. */
export const bindValues: Bind = (value, column) =>
  column ? sql.param(value, column) : sql.param(value)

export function whereOf(
  definition: ListQueryDefinition,
  plan: Pick<ListQueryPlan, 'filters' | 'anyOf' | 'search'>,
  bind: Bind,
): SQL | undefined {
  const conditions = plan.filters.map((clause) => filterCondition(definition, clause, bind))
  if (plan.anyOf.length > 0) {
    const branches = plan.anyOf.map(
      (branch) => and(...branch.map((clause) => filterCondition(definition, clause, bind)))!,
    )
    conditions.push(or(...branches)!)
  }
  if (plan.search !== undefined) conditions.push(searchCondition(definition, plan.search, bind))
  return conditions.length === 0 ? undefined : and(...conditions)
}

function filterCondition(definition: ListQueryDefinition, clause: FilterClause, bind: Bind): SQL {
  const { field, op, values } = clause
  if (clause.path) return jsonPathCondition(definition, clause, clause.path, bind)
  if (field.structure && (op === 'contains' || op === 'overlaps'))
    return elementsCondition(definition, clause, bind)
  const column = field.column
  const [value, second] = values
  switch (op) {
    case 'eq':
      return eq(column, bind(value, column))
    case 'ne':
      return ne(column, bind(value, column))
    case 'lt':
      return lt(column, bind(value, column))
    case 'lte':
      return lte(column, bind(value, column))
    case 'gt':
      return gt(column, bind(value, column))
    case 'gte':
      return gte(column, bind(value, column))
    case 'in':
      return inArray(
        column,
        values.map((one) => bind(one, column)),
      )
    case 'not_in':
      return notInArray(
        column,
        values.map((one) => bind(one, column)),
      )
    case 'between':
      return between(column, bind(value, column), bind(second, column))
    case 'null':
      return value ? isNull(column) : isNotNull(column)
    default:
      return textCondition(definition, field, op, String(value), bind)
  }
}

function textCondition(
  definition: ListQueryDefinition,
  field: QueryField,
  op: FilterClause['op'],
  needle: string,
  bind: Bind,
): SQL {
  const column = field.column
  // An empty needle is in every string.
  if (needle === '') return isNotNull(column)
  const insensitive = op.startsWith('i')
  const kind = insensitive ? op.slice(1) : op
  const escaped = escapeLike(needle)
  const pattern =
    kind === 'contains' ? `%${escaped}%` : kind === 'starts_with' ? `${escaped}%` : `%${escaped}`
  if (definition.dialect === 'postgres') {
    return insensitive
      ? sql`${column} ilike ${bind(pattern)} escape '\\'`
      : sql`${column} like ${bind(pattern)} escape '\\'`
  }
  // SQLite's LIKE ignores ASCII case; the case-sensitive forms compare exactly instead.
  if (insensitive) return sql`${column} like ${bind(pattern)} escape '\\'`
  const value = bind(needle)
  if (kind === 'contains') return sql`instr(${column}, ${value}) > 0`
  if (kind === 'starts_with') return sql`substr(${column}, 1, length(${value})) = ${value}`
  return sql`substr(${column}, -length(${value})) = ${value}`
}

/**
 * `contains` (every value is an element) and `overlaps` (some value is) of an array field or a
 * JSON field holding an array. PostgreSQL arrays use `@>` / `&&` (GIN-indexable); JSON arrays
 * are read element by element as text, and a JSON value that is not an array matches neither.
 */
function elementsCondition(
  definition: ListQueryDefinition,
  { field, op, values }: FilterClause,
  bind: Bind,
): SQL {
  const column = field.column
  if (field.structure === 'array') {
    const operator = sql.raw(op === 'contains' ? '@>' : '&&')
    const type = sql.raw(field.info.sqlType)
    return sql`${column} ${operator} cast(${bind(values, column)} as ${type})`
  }
  const postgres = definition.dialect === 'postgres'
  const element = postgres
    ? sql.raw('kiln_e.v')
    : sql.raw(
        "(case kiln_e.type when 'true' then 'true' when 'false' then 'false' else cast(kiln_e.value as text) end)",
      )
  const elements = postgres
    ? sql`jsonb_array_elements_text(cast(${column} as jsonb)) as kiln_e(v)`
    : sql`json_each(${column}) as kiln_e`
  const any = (needles: unknown[]) =>
    sql`exists (select 1 from ${elements} where ${element} in (${sql.join(
      needles.map((needle) => bind(needle)),
      sql`, `,
    )}))`
  const match = op === 'contains' ? and(...values.map((value) => any([value])))! : any(values)
  return postgres
    ? sql`(case when jsonb_typeof(cast(${column} as jsonb)) = 'array' then ${match} else false end)`
    : sql`(case when json_valid(${column}) and json_type(${column}) = 'array' then ${match} else 0 end)`
}

/**
 * A JSON field's value at a path, as text: `->` / `->>` on PostgreSQL, `json_extract` on SQLite
 * (its true and false written as PostgreSQL writes them). A missing key or a JSON null is NULL.
 */
function jsonPathCondition(
  definition: ListQueryDefinition,
  { field, op, values }: FilterClause,
  path: string[],
  bind: Bind,
): SQL {
  const column = field.column
  let value: SQL
  if (definition.dialect === 'postgres') {
    const steps = path.map(
      (key, i) => sql`${sql.raw(i === path.length - 1 ? '->>' : '->')} cast(${bind(key)} as text)`,
    )
    value = sql`(${column} ${sql.join(steps, sql` `)})`
  } else {
    const at = `$${path.map((key) => `."${key}"`).join('')}`
    value = sql`(case when json_valid(${column}) then (case json_type(${column}, ${bind(at)}) when 'true' then 'true' when 'false' then 'false' else cast(json_extract(${column}, ${bind(at)}) as text) end) end)`
  }
  const [first] = values
  switch (op) {
    case 'null':
      return first ? isNull(value) : isNotNull(value)
    case 'ne':
      return ne(value, bind(first))
    case 'in':
      return inArray(
        value,
        values.map((one) => bind(one)),
      )
    case 'not_in':
      return notInArray(
        value,
        values.map((one) => bind(one)),
      )
    default:
      return eq(value, bind(first))
  }
}

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`)
}

/** `search=`: every term over the search columns, by the definition's search mode. */
export function searchCondition(definition: ListQueryDefinition, term: string, bind: Bind): SQL {
  const mode = definition.searchMode
  if (mode === 'tsvector') {
    const language = sql.raw(`'${definition.searchLanguage}'::regconfig`)
    return sql`${searchDocument(definition, language)} @@ websearch_to_tsquery(${language}, ${bind(term)})`
  }
  if (typeof mode === 'object') {
    const fts = sql.identifier(mode.fts5)
    // defineListQuery refuses FTS5 without a single-column primary key: it is the FTS5 rowid.
    return sql`${definition.primaryKey!.column} in (select rowid from ${fts} where ${fts} match ${bind(fts5Query(term))})`
  }
  const pattern = bind(`%${escapeLike(term)}%`)
  const operator = definition.dialect === 'postgres' ? sql.raw('ilike') : sql.raw('like')
  return or(
    ...definition.search.map((field) => sql`${field.column} ${operator} ${pattern} escape '\\'`),
  )!
}

function searchDocument(definition: ListQueryDefinition, language: SQL): SQL {
  const parts = definition.search.map((field) => sql`coalesce(${field.column}, '')`)
  return sql`to_tsvector(${language}, ${sql.join(parts, sql` || ' ' || `)})`
}

/** Each word of the term as an FTS5 phrase ("…"), so no input is read as FTS5 syntax. */
function fts5Query(term: string): string {
  return term
    .split(/\s+/)
    .filter(Boolean)
    .map((word) => `"${word.replaceAll('"', '""')}"`)
    .join(' ')
}

/** ORDER BY of the plan; `reverse` reads backwards (a `prev` cursor). Nulls sort as the largest values. */
export function orderOf(sort: SortKey[], reverse = false): SQL[] {
  return sort.map(({ field, desc }) => {
    const descending = desc !== reverse
    const direction = sql.raw(descending ? 'desc' : 'asc')
    if (!field.info.nullable) return sql`${field.column} ${direction}`
    return sql`${field.column} ${direction} ${sql.raw(descending ? 'nulls first' : 'nulls last')}`
  })
}

/**
 * Records after `values` in the plan's order (before them when `reverse`): the keyset
 * condition of a cursor page. Same-direction, non-null keys use one row comparison
 * (`(a, id) > ($1, $2)`), which both databases answer from an index.
 */
export function keysetCondition(
  definition: ListQueryDefinition,
  sort: SortKey[],
  values: unknown[],
  reverse: boolean,
  bind: Bind,
): SQL {
  const bindKey = (field: QueryField, value: unknown) =>
    exactTimestamp(definition, field)
      ? sql`cast(${bind(value)} as ${sql.raw(field.info.sqlType)})`
      : bind(value, field.column)
  const first = sort[0]!
  const sameWay = sort.every((key) => key.desc === first.desc && !key.field.info.nullable)
  if (sameWay) {
    const operator = sql.raw(first.desc !== reverse ? '<' : '>')
    const columns = sql.join(
      sort.map((key) => sql`${key.field.column}`),
      sql`, `,
    )
    const bound = sql.join(
      sort.map((key, i) => bindKey(key.field, values[i])),
      sql`, `,
    )
    return sort.length === 1
      ? sql`${first.field.column} ${operator} ${bound}`
      : sql`(${columns}) ${operator} (${bound})`
  }
  const branches = sort.map((key, i) => {
    const equalBefore = sort.slice(0, i).map((prior, j) => {
      const value = values[j]
      return value === null
        ? isNull(prior.field.column)
        : sql`${prior.field.column} = ${bindKey(prior.field, value)}`
    })
    const value = values[i]
    const column = key.field.column
    const larger = key.desc === reverse
    let after: SQL
    if (value === null) after = larger ? sql`false` : isNotNull(column)
    else {
      const operator = sql.raw(larger ? '>' : '<')
      const beyond = sql`${column} ${operator} ${bindKey(key.field, value)}`
      after = larger && key.field.info.nullable ? or(beyond, isNull(column))! : beyond
    }
    return and(...equalBefore, after)!
  })
  return or(...branches)!
}
