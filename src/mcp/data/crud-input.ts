import { type Column, getTableColumns } from 'drizzle-orm'
import { FieldValueError } from '../../core/errors.ts'
import { ToolError } from '../tool-error.ts'
import type { McpCaller, ModelAccess } from './access.ts'
import {
  findModel,
  type McpColumn,
  type McpModel,
  type McpModelSource,
  primaryKeyOf,
} from './models.ts'
import { coerceValue } from './values.ts'

/**
 * The checks behind the data tools: model and field names against the model, values against
 * their columns, the record's id and the caller's tenant.
 */

export type JsonRecord = Record<string, unknown>

export type { McpCaller }

/** The model a tool names, among the ones the caller's tools can see. */
export function resolveModel(
  source: McpModelSource,
  name: string,
  visible: readonly McpModel[] = source.models,
): McpModel {
  const model = findModel({ models: visible }, name)
  if (model) return model
  const valid = visible.map((m) => m.resource).join(', ') || '(none)'
  throw new ToolError(`Unknown model "${name}". Valid models: ${valid}`)
}

export function requirePrimaryKey(model: McpModel): McpColumn {
  const key = primaryKeyOf(model)
  if (!key) throw new ToolError(`${model.resource} has no single-column primary key`)
  return key
}

/** Checks the field names and values of `data` against the model; collects every problem. */
export function parseData(
  model: McpModel,
  data: Record<string, unknown>,
  allowed: readonly McpColumn[],
  action: 'create' | 'update',
): Map<McpColumn, unknown> {
  const values = new Map<McpColumn, unknown>()
  const unknown: string[] = []
  const problems: string[] = []
  for (const [name, value] of Object.entries(data)) {
    const column = allowed.find((candidate) => candidate.name === name)
    if (!column) {
      unknown.push(name)
      continue
    }
    try {
      values.set(
        column,
        coerceValue(column, value, {
          enumValues: enumValuesOf(model, column),
          dialect: model.dialect,
        }),
      )
    } catch (error) {
      if (!(error instanceof FieldValueError)) throw error
      problems.push(`${name}: ${error.message}`)
    }
  }
  if (unknown.length > 0) {
    throw new ToolError(
      `Unknown field(s) for ${action} on ${model.resource}: ${unknown.map(quote).join(', ')}. ` +
        `Valid fields: ${allowed.map((column) => column.name).join(', ')}`,
    )
  }
  if (problems.length > 0)
    throw new ToolError(`Invalid data for ${model.resource}: ${problems.join('; ')}`)
  return values
}

/** The REST list's page sizes: the tools page as the API does. */
export { DEFAULT_PER_PAGE, MAX_PER_PAGE } from '../../api/internal.ts'

export interface TenantScope {
  column: McpColumn
  value: unknown
}

/**
 * The caller's tenant as a value of the model's tenant column. A tenant's call on a model
 * without that column was refused before (unless the model is global, shared by all).
 */
export function tenantOf(
  model: McpModel,
  access: ModelAccess,
  caller: McpCaller | undefined,
): TenantScope | undefined {
  const column = access.tenantColumn
  if (caller?.tenantId === undefined || !column) return undefined
  try {
    return { column, value: coerceValue(column, caller.tenantId, { dialect: model.dialect }) }
  } catch {
    throw new ToolError(`Your tenant cannot be matched to ${model.resource}.${column.name}`)
  }
}

export function checkTenantValue(tenant: TenantScope, given: unknown): unknown {
  if (given !== undefined && String(given) !== String(tenant.value)) {
    throw new ToolError(
      `${tenant.column.name} must be your own tenant; another tenant's id cannot be set`,
    )
  }
  return tenant.value
}

/**
 * The record's `{id}` as the resource operations read it, once the key's column took it: a
 * value it refuses is a tool error that says why (`id: must be an integer`).
 */
export function recordId(model: McpModel, key: McpColumn, id: string | number): string {
  try {
    return String(coerceValue({ ...key, nullable: false }, id, { dialect: model.dialect }))
  } catch (error) {
    if (!(error instanceof FieldValueError)) throw error
    throw new ToolError(`id: ${error.message}`)
  }
}

export function notFound(model: McpModel, id: string | number): ToolError {
  return new ToolError(`No ${model.resource} record with id ${JSON.stringify(id)}`)
}

export function drizzleColumn(model: McpModel, column: McpColumn): Column {
  const found = getTableColumns(model.table)[column.key]
  if (!found) throw new TypeError(`Model ${model.name} has no column property ${column.key}`)
  return found
}

function enumValuesOf(model: McpModel, column: McpColumn): readonly string[] | undefined {
  return column.enumValues ?? drizzleColumn(model, column).enumValues
}

export function toRowObject(values: Map<McpColumn, unknown>): Record<string, unknown> {
  const row: Record<string, unknown> = {}
  for (const [column, value] of values) row[column.key] = value
  return row
}

function quote(name: string): string {
  return JSON.stringify(name)
}
