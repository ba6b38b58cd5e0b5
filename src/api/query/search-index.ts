import type { ListQueryDefinition } from './definition.ts'

/**
 * The SQL that backs `search=` with a real index, for a migration of the app:
 * - `tsvector` mode (Postgres): a GIN index on exactly the expression the query uses, so the
 *   planner answers `@@` from the index;
 * - `{ fts5: name }` mode (SQLite): an external-content FTS5 table over the search columns
 *   and the triggers that keep it in step with the table;
 * - `like` mode: nothing (it scans; fine for small tables).
 */
export function searchIndexMigration(definition: ListQueryDefinition): string {
  const { tableName, searchMode: mode } = definition
  const columns = definition.search.map((field) => field.name)
  if (columns.length === 0 || mode === 'like') return ''
  const quote = (name: string) => `"${name.replaceAll('"', '""')}"`
  if (mode === 'tsvector') {
    const document = columns.map((name) => `coalesce(${quote(name)}, '')`).join(` || ' ' || `)
    return [
      `-- search= on ${tableName}: full-text index (the expression must match the query's).`,
      `CREATE INDEX IF NOT EXISTS ${quote(`${tableName}_search_idx`)} ON ${quote(tableName)}`,
      `  USING GIN (to_tsvector('${definition.searchLanguage}'::regconfig, ${document}));`,
      '',
    ].join('\n')
  }
  const fts = quote(mode.fts5)
  const table = quote(tableName)
  if (!definition.primaryKey)
    throw new TypeError(`${tableName}: FTS5 needs a single-column primary key`)
  const key = quote(definition.primaryKey.name)
  const list = columns.map(quote).join(', ')
  const values = (prefix: string) => columns.map((name) => `${prefix}.${quote(name)}`).join(', ')
  return [
    `-- search= on ${tableName}: an FTS5 index kept in step by triggers.`,
    `CREATE VIRTUAL TABLE IF NOT EXISTS ${fts} USING fts5(${list}, content=${table}, content_rowid=${key});`,
    `INSERT INTO ${fts}(${fts}) VALUES ('rebuild');`,
    `CREATE TRIGGER IF NOT EXISTS ${quote(`${mode.fts5}_ai`)} AFTER INSERT ON ${table} BEGIN`,
    `  INSERT INTO ${fts}(rowid, ${list}) VALUES (new.${key}, ${values('new')});`,
    'END;',
    `CREATE TRIGGER IF NOT EXISTS ${quote(`${mode.fts5}_ad`)} AFTER DELETE ON ${table} BEGIN`,
    `  INSERT INTO ${fts}(${fts}, rowid, ${list}) VALUES ('delete', old.${key}, ${values('old')});`,
    'END;',
    `CREATE TRIGGER IF NOT EXISTS ${quote(`${mode.fts5}_au`)} AFTER UPDATE ON ${table} BEGIN`,
    `  INSERT INTO ${fts}(${fts}, rowid, ${list}) VALUES ('delete', old.${key}, ${values('old')});`,
    `  INSERT INTO ${fts}(rowid, ${list}) VALUES (new.${key}, ${values('new')});`,
    'END;',
    '',
  ].join('\n')
}
