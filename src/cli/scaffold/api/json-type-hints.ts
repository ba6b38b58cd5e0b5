import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { ModelInfo } from '../../../db/index.ts'

/**
 * The JSON columns typed only with Drizzle's `$type<T>()`: a type TypeScript sees and nothing
 * checks at run time, so the API stores any JSON there. `typedJson` attaches a schema that every
 * write is checked against. `$type` leaves no trace on the column, so the schema's source (the
 * schema module's folder) is read for it: `jsonb('meta').$type<…>()`, the chain on one line or
 * continued on lines that start with `.`.
 */
export function jsonColumnsTypedOnlyByType(
  models: readonly ModelInfo[],
  schemaFile: string,
): string[] {
  const source = schemaSources(schemaFile)
  return models.flatMap((model) =>
    model.columns
      .filter((column) => column.dataType === 'json' && column.jsonSchema === undefined)
      .filter((column) => {
        const name = column.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
        return new RegExp(
          `\\b(?:json|jsonb|text)\\(\\s*['"\`]${name}['"\`][^)]*\\)(?:[^\\n,]|\\n\\s*(?=\\.))*?\\.\\$type<`,
        ).test(source)
      })
      .map((column) => `${model.tableName}.${column.name}`),
  )
}

function schemaSources(schemaFile: string): string {
  const dir = dirname(schemaFile)
  if (!existsSync(dir)) return ''
  return readdirSync(dir)
    .filter((name) => /\.[cm]?[jt]s$/.test(name) && !name.endsWith('.d.ts'))
    .map((name) => readFileSync(join(dir, name), 'utf8'))
    .join('\n')
}

/** The hint `make:api` prints for those columns, with the first one as the example. */
export function typedJsonHint(
  columns: readonly string[],
  dialect: 'postgres' | 'sqlite',
): string | undefined {
  if (columns.length === 0) return undefined
  const column = columns[0]!.split('.')[1]!
  const builder =
    dialect === 'postgres' ? `jsonb('${column}')` : `text('${column}', { mode: 'json' })`
  return (
    `ℹ ${columns.join(', ')}: typed with $type<…>() only, which nothing checks at run time, so ` +
    `the API and the MCP tools store any JSON there. To check every write, attach a zod schema ` +
    `with typedJson from 'kilnjs/db': typedJson(${builder}, schema) (docs/rest-api/make-api.md, "Typed JSON columns")`
  )
}
