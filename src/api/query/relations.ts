import { getTableColumns, getTableName, is, type Table } from 'drizzle-orm'
import { getTableConfig as getPgTableConfig, PgTable } from 'drizzle-orm/pg-core'
import { getTableConfig as getSqliteTableConfig, type SQLiteTable } from 'drizzle-orm/sqlite-core'
import { belongsTo, hasMany, type RelationSpec } from './options.ts'

interface ForeignKeyInfo {
  from: Table
  to: Table
  local: string
  foreign: string
}

function foreignKeysOf(table: Table): ForeignKeyInfo[] {
  const config = is(table, PgTable)
    ? getPgTableConfig(table)
    : getSqliteTableConfig(table as SQLiteTable)
  return config.foreignKeys.flatMap((fk) => {
    const reference = fk.reference()
    if (reference.columns.length !== 1 || reference.foreignColumns.length !== 1) return []
    return [
      {
        from: table,
        to: reference.foreignTable,
        local: reference.columns[0]!.name,
        foreign: reference.foreignColumns[0]!.name,
      },
    ]
  })
}

function columnNamed(table: Table, name: string) {
  return Object.values(getTableColumns(table)).find((column) => column.name === name)
}

/**
 * The relations the foreign keys of `tables` give `table`, named as a Laravel or Drizzle user
 * would: a key `author_id` → users is the belongs-to `author`; a key `post_id` of comments
 * pointing here is the has-many `comments`. Names that clash with a column or each other are
 * left out. Single-column foreign keys only.
 */
export function foreignKeyRelations(
  table: Table,
  tables: readonly Table[],
  { limit = 10 }: { limit?: number } = {},
): Record<string, RelationSpec> {
  const taken = new Set(Object.values(getTableColumns(table)).map((column) => column.name))
  const relations: Record<string, RelationSpec> = {}
  const add = (name: string, spec: RelationSpec) => {
    if (!/^[a-z][a-z0-9_]*$/i.test(name) || taken.has(name)) return
    taken.add(name)
    relations[name] = spec
  }
  for (const key of foreignKeysOf(table)) {
    const local = columnNamed(table, key.local)
    const remote = columnNamed(key.to, key.foreign)
    if (!local || !remote) continue
    const name = key.local.endsWith('_id') ? key.local.slice(0, -3) : `${key.local}_record`
    add(name, belongsTo(key.to, local, remote))
  }
  for (const other of tables) {
    for (const key of foreignKeysOf(other)) {
      if (key.to !== table) continue
      const foreign = columnNamed(other, key.local)
      const local = columnNamed(table, key.foreign)
      if (!foreign || !local) continue
      add(getTableName(other), hasMany(other, foreign, local, { limit }))
    }
  }
  return relations
}
