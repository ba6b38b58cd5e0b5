import { and, type Column, eq, sql } from 'drizzle-orm'
import type { ListQueryDefinition } from './definition.ts'
import { type ListQueryContext, runListQuery } from './run.ts'
import type { Row } from './types.ts'

/**
 * Whether one record is in a caller's view, and as what: the list query (its row filter, soft
 * delete, the `params`' filters and fields, the record mapper, the context's `scope`) narrowed
 * to the record whose `key` is `id`, the rules the list's own, applied in SQL and never restated.
 * The key need not be a field the list may filter on. Undefined when the list would not show it;
 * an `id` of undefined reads none (the parameters are checked alone: a bad one is the list's 422).
 * The REST streams and the MCP subscriptions and record resources all ask it.
 */
export async function listedRecord(
  definition: ListQueryDefinition,
  key: Column,
  id: unknown,
  context: ListQueryContext,
  params: URLSearchParams = new URLSearchParams(),
): Promise<Row | undefined> {
  const query = new URLSearchParams(params)
  query.set('count', 'none')
  query.set('per_page', '1')
  const one = id === undefined ? sql`1 = 0` : eq(key, id)
  const { scope } = context
  const page = await runListQuery(definition, new URL(`http://localhost/?${query}`), {
    ...context,
    scope: { where: scope ? and(one, scope.where)! : one, key: `${scope?.key ?? ''}:one` },
  })
  return page.data[0]
}
