import { getTableColumns, getTableName, is, Table } from 'drizzle-orm'
import type { Dialect } from '../../../src/db/index.ts'
import type { McpModel, McpModelSource } from '../../../src/mcp/index.ts'

/** A minimal model source built from Drizzle tables (the shape kiln/db's registry gives). */
export function modelsFromSchema(
  schema: Record<string, unknown>,
  dialect: Dialect,
): McpModelSource {
  const models: McpModel[] = []
  for (const table of Object.values(schema)) {
    if (!is(table, Table)) continue
    const tableName = getTableName(table)
    models.push({
      name: tableName,
      resource: tableName,
      tableName,
      table,
      dialect,
      columns: Object.entries(getTableColumns(table)).map(([key, column]) => ({
        name: column.name,
        key,
        sqlType: column.getSQLType(),
        dataType: column.dataType,
        nullable: !column.notNull,
        hasDefault: column.hasDefault,
        primaryKey: column.primary,
        autoIncrement:
          /serial/i.test(column.getSQLType()) || (dialect === 'sqlite' && column.primary),
        length: (column as unknown as { length?: number }).length,
      })),
    })
  }
  return { models }
}
