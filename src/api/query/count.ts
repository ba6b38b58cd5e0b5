import { count as countAll, fillPlaceholders, type SQL, sql } from 'drizzle-orm'
import type { RecordCounter } from '../rest/record-counter.ts'
import type { ListQueryDefinition } from './definition.ts'
import type { CountStrategy } from './limits.ts'
import type { ListQueryPlan } from './plan.ts'
import { runQuery } from './statement.ts'
import type { QueryDb } from './types.ts'

/** The list's condition, its placeholders' values beside it (see `Placeholders`). */
export interface BoundCondition {
  where: SQL | undefined
  values: Record<string, unknown>
}

export interface CountResult {
  total: number | null
  /** What `total` is: an exact count, a planner estimate, or absent. */
  kind: CountStrategy
}

/**
 * The list's `total` by the plan's count strategy:
 * - `exact`: `count(*)` with the list's filters, through the record counter (cached per table
 *   and filter digest, invalidated by API writes, trusted `ttlMs` at most); a partial offset
 *   page gives it without any count;
 * - `estimated`: on Postgres the planner's row estimate for the filtered query (one EXPLAIN,
 *   no table scan, cached as the exact counts are), or an exact count when the estimate is
 *   below the definition's threshold;
 *   SQLite has no estimate and counts exactly;
 * - `none`: no count at all.
 *
 * The count's query is only built when the cache has no total for it.
 */
export async function countRecords(
  /** The database to count on, asked for only when a count is sent (it may be built per request). */
  db: () => QueryDb,
  definition: ListQueryDefinition,
  plan: ListQueryPlan,
  condition: BoundCondition,
  counts: RecordCounter,
  rowsOnPage: number,
  /** Names the counted rows in the cache: '' for the whole table. */
  variant: string,
): Promise<CountResult> {
  if (plan.count === 'none') return { total: null, kind: 'none' }
  const exact = async (): Promise<CountResult> => {
    const query = () => countQuery(db(), definition, condition)
    const total =
      plan.mode === 'offset' && variant === ''
        ? await counts.total(definition.tableName, plan, rowsOnPage, query)
        : plan.mode === 'offset' && isLastPage(plan, rowsOnPage)
          ? plan.offset + rowsOnPage
          : await counts.count(definition.tableName, variant, query)
    return { total, kind: 'exact' }
  }
  if (plan.count === 'exact' || definition.dialect !== 'postgres') return exact()
  if (plan.mode === 'offset' && isLastPage(plan, rowsOnPage)) return exact()
  // Cached like the exact counts (per filter, ttlMs, dropped by API writes): a planner call
  // per request would cost more than the cached exact count it stands in for. -1: no estimate.
  const estimate = await counts.count(
    definition.tableName,
    `estimate:${variant}`,
    async () => (await estimateRows(db(), definition, condition)) ?? -1,
  )
  if (estimate < 0 || estimate < definition.estimateThreshold) return exact()
  return { total: estimate, kind: 'estimated' }
}

function isLastPage(plan: ListQueryPlan, rowsOnPage: number): boolean {
  return rowsOnPage < plan.perPage && (rowsOnPage > 0 || plan.page === 1)
}

async function countQuery(
  db: QueryDb,
  definition: ListQueryDefinition,
  { where, values }: BoundCondition,
) {
  const query = db.select({ total: countAll() }).from(definition.table).where(where)
  const [row] = await runQuery(definition, query, values)
  return Number(row?.total ?? 0)
}

interface QueryClient {
  query(text: string, params: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>
}

/**
 * The planner's estimate of the rows the filtered list has: `EXPLAIN (FORMAT JSON)` of
 * `SELECT 1 … WHERE …` with the same bound parameters, read from the top plan node.
 */
async function estimateRows(
  db: QueryDb,
  definition: ListQueryDefinition,
  { where, values }: BoundCondition,
): Promise<number | undefined> {
  const client = (db as { $client?: QueryClient }).$client
  if (!client || typeof client.query !== 'function') return undefined
  const query = db.select({ one: sql`1` }).from(definition.table).where(where).toSQL()
  const params = fillPlaceholders(query.params, values)
  const result = await client.query(`explain (format json) ${query.sql}`, params)
  let plan: unknown = result.rows[0]?.['QUERY PLAN']
  if (typeof plan === 'string') plan = JSON.parse(plan)
  const rows = (plan as Array<{ Plan?: { 'Plan Rows'?: unknown } }> | undefined)?.[0]?.Plan?.[
    'Plan Rows'
  ]
  return typeof rows === 'number' && Number.isFinite(rows) ? Math.round(rows) : undefined
}
