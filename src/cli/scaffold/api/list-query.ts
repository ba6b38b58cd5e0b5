import { type Column, getTableColumns, type Table } from 'drizzle-orm'
import { foreignKeyRelations } from '../../../api/query/relations.ts'
import { fieldKindOf, structureOf } from '../../../api/query/values.ts'
import { isCredentialField } from '../../../core/credentials.ts'
import type { ColumnInfo } from '../../../db/models/columns.ts'
import { LINE_WIDTH } from './format.ts'
import type { GeneratedRelation, ModelTemplateInput } from './template-input.ts'

/**
 * The relations of a model among the generated ones, from the schema's foreign keys:
 * `author_id` → users gives `author`, comments.post_id → posts gives `comments`.
 */
export function relationsOf(
  input: ModelTemplateInput,
  all: ModelTemplateInput[],
): GeneratedRelation[] {
  const byTable = new Map<Table, ModelTemplateInput>(all.map((other) => [other.model.table, other]))
  const ref = (table: Table, column: Column) => {
    const owner = byTable.get(table)!
    const key = Object.entries(getTableColumns(table)).find(([, c]) => c === column)![0]
    return `${owner.names.table}.${key}`
  }
  const relations = foreignKeyRelations(input.model.table, [...byTable.keys()])
  return Object.entries(relations).flatMap(([name, spec]) => {
    const related = byTable.get(spec.table)
    if (!related) return []
    const own = input.model.table
    const helper = spec.kind === 'belongs-to' ? 'belongsTo' : 'hasMany'
    const args =
      spec.kind === 'belongs-to'
        ? [related.names.table, ref(own, spec.local), ref(spec.table, spec.remote)]
        : [related.names.table, ref(spec.table, spec.remote), ref(own, spec.local)]
    return [{ name, expr: `${helper}(${args.join(', ')})`, tables: [related.names.table], helper }]
  })
}

function comparable(column: ColumnInfo): boolean {
  return fieldKindOf(column) !== 'other'
}

/** `const name = ['a', 'b']`, one item per line when it does not fit. */
function constList(name: string, items: string[]): string {
  const quoted = items.map((item) => `'${item}'`)
  const line = `const ${name} = [${quoted.join(', ')}]`
  if (line.length <= LINE_WIDTH) return line
  return `const ${name} = [\n${quoted.map((item) => `  ${item},`).join('\n')}\n]`
}

/** `key: ['a', 'b'],`, one item per line when it does not fit. */
function list(key: string, items: string[]): string {
  const quoted = items.map((item) => `'${item}'`)
  const line = `  ${key}: [${quoted.join(', ')}],`
  if (line.length <= LINE_WIDTH) return line
  return `  ${key}: [\n${quoted.map((item) => `    ${item},`).join('\n')}\n  ],`
}

/**
 * The `export const postsResource = defineResource(…)` block of a controller. The field list is
 * written once and shared by `fields`, `filter` and `sort` (a second list holds the comparable
 * fields when some are not), so allowing less is one edit in one place. Relations are not
 * written: the definition takes them from the schema's foreign keys at run time.
 */
export function resourceBlock(input: ModelTemplateInput): string {
  const { names, shown } = input
  const fields = shown.map((column) => column.name)
  const compared = shown.filter(comparable).map((column) => column.name)
  // Arrays and JSON are filtered by their elements and paths, but have no order.
  const filtered = shown
    .filter((column) => comparable(column) || structureOf(column))
    .map((column) => column.name)
  // Shown credentials (opted in, or --include-all) are exposed by name: nothing else is.
  const exposed = shown.filter((column) => isCredentialField([column.name, column.key]))
  const search = shown
    .filter((column) => fieldKindOf(column) === 'text' && !exposed.includes(column))
    .map((c) => c.name)
  const fieldsName = `${names.definition.replace(/Resource$/, '')}Fields`
  const comparedName = compared.length === fields.length ? fieldsName : `${fieldsName}InOrder`
  const filteredName =
    filtered.length === fields.length
      ? fieldsName
      : filtered.length === compared.length
        ? comparedName
        : `${fieldsName}Filtered`
  const constants = [
    constList(fieldsName, fields),
    ...(comparedName === fieldsName
      ? []
      : [
          `/** The fields with an order (not JSON or lists): ${filteredName === comparedName ? 'filter and sort take' : 'sort takes'} these. */`,
          constList(comparedName, compared),
        ]),
    ...(filteredName === fieldsName || filteredName === comparedName
      ? []
      : [
          `/** The fields filter takes: those with an order, and arrays and JSON (by element or path). */`,
          constList(filteredName, filtered),
        ]),
  ]
  const requests = `  requests: { create: ${names.createRequest}, update: ${names.updateRequest} },`
  const scopes = `  scopes: { read: '${names.resource}:read', write: '${names.resource}:write' },`
  const head = `export const ${names.definition} = defineResource(${names.table}, {`
  return `${constants.join('\n')}

${head}
${[
  `  fields: ${fieldsName},`,
  `  filter: ${filteredName},`,
  `  sort: ${comparedName},`,
  ...(exposed.length > 0
    ? [
        list(
          'expose',
          exposed.map((column) => column.name),
        ),
      ]
    : []),
  ...(search.length > 0 ? [list('search', search)] : []),
  `  resource: ${names.toResource},`,
  scopes.length <= LINE_WIDTH
    ? scopes
    : `  scopes: {\n    read: '${names.resource}:read',\n    write: '${names.resource}:write',\n  },`,
  requests.length <= LINE_WIDTH
    ? requests
    : `  requests: {\n    create: ${names.createRequest},\n    update: ${names.updateRequest},\n  },`,
].join('\n')}
})`
}
