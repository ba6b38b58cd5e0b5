import type { Table } from 'drizzle-orm'
import type { z } from 'zod'
import { type CredentialOptions, type Dialect, isCredentialField } from '../../db/index.ts'

/**
 * What the data tools need to know about a column: the model registry's `ColumnInfo`
 * (kiln/db) satisfies it.
 */
export interface McpColumn {
  /** The database column name: the field name on the wire. */
  name: string
  /** The property of the Drizzle table. */
  key: string
  sqlType: string
  dataType: string
  nullable: boolean
  hasDefault: boolean
  primaryKey: boolean
  autoIncrement: boolean
  length?: number | undefined
  /** The allowed values of an enum column. */
  enumValues?: readonly string[] | undefined
  /** The zod schema `typedJson` attached to a JSON column (kilnjs/db). */
  jsonSchema?: z.ZodType | undefined
}

/** What the data tools need to know about a model: kiln/db's `ModelInfo` satisfies it. */
export interface McpModel {
  name: string
  resource: string
  tableName: string
  table: Table
  dialect: Dialect
  columns: readonly McpColumn[]
}

/** A set of models: kiln/db's `ModelRegistry` satisfies it. */
export interface McpModelSource {
  models: readonly McpModel[]
}

/** The one credential rule of every reader (`isCredentialField`), for a column's names. */
export function isSensitiveField(
  name: string | readonly string[],
  options: CredentialOptions = {},
): boolean {
  return isCredentialField(name, options)
}

/** Timestamps the tools fill themselves and never require. */
export const TIMESTAMP_FIELDS: readonly string[] = ['created_at', 'updated_at']

/** Names a model answers to: its resource (`blog_posts`), its name (`BlogPost`), its table. */
export function modelNames(model: McpModel): string[] {
  return [...new Set([model.resource, model.name, model.tableName])]
}

/** The model a tool argument names, matched exactly first, then case-insensitively. */
export function findModel(source: McpModelSource, name: string): McpModel | undefined {
  const exact = source.models.find((model) => modelNames(model).includes(name))
  if (exact) return exact
  const lower = name.toLowerCase()
  return source.models.find((model) =>
    modelNames(model).some((candidate) => candidate.toLowerCase() === lower),
  )
}

/** The single primary-key column, or undefined for a table without one or with a composite key. */
export function primaryKeyOf(model: McpModel): McpColumn | undefined {
  const keys = model.columns.filter((column) => column.primaryKey)
  return keys.length === 1 ? keys[0] : undefined
}
