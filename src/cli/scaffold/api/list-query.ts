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
 * The `export const postsQuery = defineListQuery(…)` block of a controller. The field list is
 * written once and shared by `fields`, `filter` and `sort` (a second list holds the comparable
 * fields when some are not), so allowing less is one edit in one place.
 */
export function listQueryBlock(input: ModelTemplateInput, relations: GeneratedRelation[]): string {
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
  const fieldsName = `${names.query.replace(/Query$/, '')}Fields`
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
  const include =
    relations.length === 0
      ? []
      : [
          '  include: {',
          ...relations.map((relation) => `    ${relation.name}: ${relation.expr},`),
          '  },',
        ]
  return `/**
 * What \`/api/v1/${names.resource}\` lets a caller read: the fields records show, on every surface
 * (list, show, the answers to writes, \`include=\` from other resources, the MCP tools, the
 * OpenAPI document: a column left out here is left out of what the resource returns too), the
 * ones \`filter[…]\` and \`sort=\` take, the text \`search=\` looks in and the relations
 * \`include=\` loads. Sensitive fields are refused.
 */
${constants.join('\n')}

export const ${names.query} = defineListQuery(${names.table}, {
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
  ...include,
  `  resource: ${names.toResource},`,
].join('\n')}
})`
}
