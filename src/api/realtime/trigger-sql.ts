import { STATEMENT_BREAKPOINT } from '../../db/migrate.ts'

/** The channel the realtime trigger notifies, and `outsideWrites` listens on. */
export const CHANGES_CHANNEL = 'kiln_changes'

/** The trigger function, and the name of the trigger it runs as on each table. */
export const TRIGGER_FUNCTION = 'kiln_notify_change'

/** One table the trigger publishes: what `kilnjs make:realtime-trigger` reads from a model. */
export interface CapturedTable {
  /** The resource its changes are told to (`blog_posts`). */
  resource: string
  table: string
  /** The primary key's column. */
  key: string
  /** The soft-delete column (`deleted_at`), when the table has one. */
  deletedAt?: string | undefined
}

/**
 * The function: one notification per row written, naming the row and never holding its
 * contents (a row may hold credentials): `{ resource, table, kind, id, tx }`, `tx` the
 * transaction's id, which tells two notifications of one change apart from two changes. The
 * arguments of each table's trigger: its resource, its key column, its soft-delete column.
 * A key longer than 1,000 characters is not sent: pg_notify refuses 8,000 bytes, and a change
 * lost is better than a write refused.
 */
const FUNCTION_SQL = `CREATE OR REPLACE FUNCTION ${TRIGGER_FUNCTION}() RETURNS trigger
LANGUAGE plpgsql AS $kiln$
DECLARE
  change_kind text := CASE TG_OP WHEN 'INSERT' THEN 'created' WHEN 'DELETE' THEN 'deleted' ELSE 'updated' END;
  key_value jsonb;
  was_live boolean;
  is_live boolean;
BEGIN
  IF TG_OP = 'DELETE' THEN
    EXECUTE format('SELECT to_jsonb(($1).%I)', TG_ARGV[1]) INTO key_value USING OLD;
  ELSE
    EXECUTE format('SELECT to_jsonb(($1).%I)', TG_ARGV[1]) INTO key_value USING NEW;
  END IF;
  IF TG_OP = 'UPDATE' AND TG_NARGS > 2 THEN
    EXECUTE format('SELECT ($1).%1$I IS NULL, ($2).%1$I IS NULL', TG_ARGV[2])
      INTO was_live, is_live USING OLD, NEW;
    IF was_live AND NOT is_live THEN
      change_kind := 'deleted';
    ELSIF is_live AND NOT was_live THEN
      change_kind := 'restored';
    END IF;
  END IF;
  -- Past 15 digits a JavaScript number loses precision: such a key travels as its text.
  IF jsonb_typeof(key_value) = 'number' AND length(key_value::text) > 15 THEN
    key_value := to_jsonb(key_value #>> '{}');
  END IF;
  IF length(key_value::text) <= 1000 THEN
    PERFORM pg_notify('${CHANGES_CHANNEL}', json_build_object('resource', TG_ARGV[0],
      'table', TG_TABLE_NAME, 'kind', change_kind, 'id', key_value,
      'tx', txid_current()::text)::text);
  END IF;
  RETURN NULL;
END
$kiln$;`

const identifier = (name: string) => `"${name.replaceAll('"', '""')}"`
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`

/**
 * The migration that has PostgreSQL tell kiln of every write to these tables, whoever makes it
 * (`outsideWrites` of `createRealtime` listens). Running it again replaces what it made.
 */
export function realtimeTriggerSql(tables: readonly CapturedTable[]): string {
  const triggers = tables.map((table) => {
    const on = identifier(table.table)
    const args = [table.resource, table.key, ...(table.deletedAt ? [table.deletedAt] : [])]
    return [
      `DROP TRIGGER IF EXISTS ${TRIGGER_FUNCTION} ON ${on};`,
      [
        `CREATE TRIGGER ${TRIGGER_FUNCTION} AFTER INSERT OR UPDATE OR DELETE ON ${on}`,
        `  FOR EACH ROW EXECUTE FUNCTION ${TRIGGER_FUNCTION}(${args.map(literal).join(', ')});`,
      ].join('\n'),
    ]
  })
  const head = [
    '-- kiln realtime: writes made outside kiln (psql, another service) reach its change feed.',
    '-- Written by `kilnjs make:realtime-trigger`: run it again after adding a model.',
  ].join('\n')
  return `${head}\n${[FUNCTION_SQL, ...triggers.flat()].join(`\n${STATEMENT_BREAKPOINT}\n`)}\n`
}
