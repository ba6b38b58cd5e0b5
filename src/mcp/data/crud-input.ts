import { and, type Column, eq, getTableColumns, type SQL, sql } from 'drizzle-orm'
import { FieldValueError } from '../../core/errors.ts'
import type { Dialect } from '../../db/index.ts'
import { classifyColumn } from '../../db/models/columns.ts'
import { ToolError } from '../tool-error.ts'
import type { McpCaller, ModelAccess } from './access.ts'
import {
  findModel,
  type McpColumn,
  type McpModel,
  type McpModelSource,
  primaryKeyOf,
} from './models.ts'
import { coerceValue, toJsonValue } from './values.ts'

/**
 * The checks behind the data tools: model and field names against the model, values against
 * their columns, the caller's tenant, and records as the tools return them.
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

export function rowCondition(
  model: McpModel,
  key: McpColumn,
  id: string | number,
  tenant: TenantScope | undefined,
): SQL {
  let value: unknown
  try {
    value = coerceValue({ ...key, nullable: false }, id, { dialect: model.dialect })
  } catch (error) {
    if (!(error instanceof FieldValueError)) throw error
    throw new ToolError(`id: ${error.message}`)
  }
  const condition = eq(drizzleColumn(model, key), value)
  return tenant ? and(condition, eq(drizzleColumn(model, tenant.column), tenant.value))! : condition
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

/**
 * Reads the clock once for the timestamps of one write: the database's `now()` on Postgres (the
 * clock `defaultNow()` reads, so a filled `updated_at` equals a defaulted `created_at`); on
 * SQLite, which runs in this process, this process's clock. Undefined for a column that holds
 * no time. The generated controllers write the same values.
 */
export function readClock(dialect: Dialect): (column: McpColumn) => unknown {
  const now = new Date()
  return (column) => {
    if (column.dataType !== 'date' && column.dataType !== 'string') return undefined
    if (dialect === 'postgres') {
      return classifyColumn(column).withTimeZone ? sql`now()` : sql`now() at time zone 'utc'`
    }
    return column.dataType === 'date' ? now : now.toISOString()
  }
}

export function toRowObject(values: Map<McpColumn, unknown>): Record<string, unknown> {
  const row: Record<string, unknown> = {}
  for (const [column, value] of values) row[column.key] = value
  return row
}

/** A database row as the tools return it: the readable columns, by column name. */
export function serialize(readable: readonly McpColumn[], row: JsonRecord): JsonRecord {
  const out: JsonRecord = {}
  for (const column of readable) out[column.name] = toJsonValue(row[column.key])
  return out
}

function quote(name: string): string {
  return JSON.stringify(name)
}
