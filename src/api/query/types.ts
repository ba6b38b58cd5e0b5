/**
 * The types every step of a list query shares (the page read, the counts, the included
 * relations, the statements and the row mapping): a file of their own, which imports nothing,
 * so the query folder's import graph has no cycle (test/structure.test.ts).
 */

// biome-ignore lint/suspicious/noExplicitAny: one code path builds queries for both dialects' Drizzle databases
export type QueryDb = any
export type Row = Record<string, unknown>

/** What a record needs of a field: its name on the wire and its key in a row. */
export interface FieldNames {
  name: string
  key: string
}
