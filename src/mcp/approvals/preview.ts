import type { Crud } from '../data/crud-contract.ts'
import { findModel, type McpModelSource, primaryKeyOf } from '../data/models.ts'

/** The record a call would change, as its caller may read it; undefined when it cannot. */
export type ReadRecord = (
  model: string,
  id: string | number,
) => Promise<Record<string, unknown> | undefined>

/**
 * Reads the record an approval is asked for through the caller's own `crud_list` (its grant,
 * row filter and visible fields), so the page shows the person no more than the assistant
 * could read. A caller without `crud_list` on the model, or a model whose list does not filter
 * by its key, shows no record: the page then names it by its id alone.
 */
export function recordReader(crud: Pick<Crud, 'list'>, models: McpModelSource): ReadRecord {
  return async (model, id) => {
    const found = findModel(models, model)
    const key = found ? primaryKeyOf(found)?.name : undefined
    if (!key) return undefined
    try {
      const page = await crud.list({ model, filters: { [key]: id }, per_page: 1, count: 'none' })
      return page.records[0]
    } catch {
      return undefined
    }
  }
}

/** One row of the page's table: a field, its value now, and the value the call writes. */
export interface FieldChange {
  name: string
  before?: string | undefined
  after?: string | undefined
}

/**
 * What a call changes, field by field: a delete shows the record it removes, an update each
 * field it writes (before → after), a create the values it writes. Values are JSON.
 */
export function fieldChanges(
  tool: string,
  record: Record<string, unknown> | undefined,
  data: unknown,
): FieldChange[] {
  const json = (value: unknown) => JSON.stringify(value) ?? 'null'
  const written =
    data !== null && typeof data === 'object' && !Array.isArray(data)
      ? (data as Record<string, unknown>)
      : {}
  if (tool === 'crud_delete') {
    return Object.entries(record ?? {}).map(([name, value]) => ({ name, before: json(value) }))
  }
  return Object.entries(written).map(([name, value]) => ({
    name,
    ...(record && name in record ? { before: json(record[name]) } : {}),
    after: json(value),
  }))
}
