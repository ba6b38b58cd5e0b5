import { type ColumnInfo, classifyColumn } from '../../../db/models/columns.ts'
import { spacedWords } from '../../../db/models/inflect.ts'
import {
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
  requestSchema,
  resourceSchema,
  resourceValue,
} from './fields.ts'
import { chain, importLine, LINE_WIDTH, property } from './format.ts'
import type { ModelTemplateInput, TemplateContext } from './template-input.ts'

/** The OpenAPI type of the resource's `{id}` (kiln's operations read it by the same column). */
export function idOf(pk: ColumnInfo, dialect: 'postgres' | 'sqlite'): { type: string } {
  const column = classifyColumn(pk, dialect)
  if (pk.dataType === 'integer' || pk.dataType === 'number' || pk.dataType === 'bigint') {
    return { type: 'integer' }
  }
  if (column.kind === 'uuid') return { type: 'uuid' }
  if (pk.dataType === 'string') return { type: 'string' }
  throw new TypeError(`The primary key ${pk.name} (${pk.sqlType}) cannot be a path identifier`)
}

/** `resources/<model>.ts`: the resource schema and type, and the conversion from a row. */
export function resourceTemplate(
  { model, names, shown, hidden }: ModelTemplateInput,
  ctx: TemplateContext,
): string {
  const row = names.variable
  const hiddenNote =
    hidden.length > 0
      ? `\n * Left out: ${hidden.map((column) => `\`${column.name}\``).join(', ')}.`
      : ''
  const typeLine =
    `export type ${names.resourceType} = z.infer<typeof ${names.resourceType}>`.length <= LINE_WIDTH
      ? `export type ${names.resourceType} = z.infer<typeof ${names.resourceType}>`
      : `export type ${names.resourceType} = z.infer<\n  typeof ${names.resourceType}\n>`
  const signature = `export function ${names.toResource}(${row}: typeof ${names.table}.$inferSelect): ${names.resourceType} {`
  const signatureLines =
    signature.length <= LINE_WIDTH
      ? signature
      : `export function ${names.toResource}(\n  ${row}: typeof ${names.table}.$inferSelect,\n): ${names.resourceType} {`
  const schemas = shown.map((column) => resourceSchema(column, names.table))
  const typedJson = schemas.some((expr) => expr.startsWith('jsonValue('))
  const kiln = [...(typedJson ? ['jsonValue'] : []), ...(schemas.some(usesUuid) ? ['uuid'] : [])]
  return `${kiln.length > 0 ? `${importLine(kiln, 'kilnjs/api')}\n` : ''}import { z } from 'zod'
${importLine([names.table], ctx.schemaImport, !typedJson)}

/**
 * ${article(spacedWords(model.name))} as the API returns it.${hiddenNote}
 */
export const ${names.resourceType} = z.object({
${shown.map((column, i) => chain('  ', `${column.name}: `, schemas[i]!, ',')).join('\n')}
})

${typeLine}

${signatureLines}
  return {
${shown.map((column) => property('    ', column.name, resourceValue(column, row))).join('\n')}
  }
}
`
}

/** `requests/<model>.ts`: the create and update body schemas. */
export function requestTemplate(
  { model, names, createFields, updateFields, passwordColumn }: ModelTemplateInput,
  ctx: TemplateContext,
): string {
  const insertType = `New${model.name}`
  const fields = [...createFields, ...updateFields.filter((f) => !createFields.includes(f))]
  const schemas = fields.map((column) => ({
    name: column.name,
    expr: requestSchema(column, ctx.dialect, insertType, names.table),
  }))
  if (passwordColumn) {
    schemas.push({
      name: 'password',
      expr: `z.string().min(${MIN_PASSWORD_LENGTH}).max(${MAX_PASSWORD_LENGTH})`,
    })
  }
  const optional = [
    ...createFields.filter((column) => column.nullable || column.hasDefault).map((c) => c.name),
    ...(passwordColumn && (passwordColumn.nullable || passwordColumn.hasDefault)
      ? ['password']
      : []),
  ]
  const createOnly = fields.filter((f) => !updateFields.includes(f)).map((f) => f.name)
  const updateOnly = fields.filter((f) => !createFields.includes(f)).map((f) => f.name)
  const renamed = fields.filter((column) => column.name !== column.key)
  const transform = renamed.length > 0 ? '.transform((body) => renameKeys(body, columns))' : ''
  const mask = (method: string, names: string[]) =>
    names.length > 0 ? `.${method}({ ${names.map((name) => `${name}: true`).join(', ')} })` : ''
  const columnsConst =
    renamed.length > 0
      ? `
/** Body fields whose model property is named differently. */
const columns = {
${renamed.map((column) => `  ${column.name}: '${column.key}',`).join('\n')}
} as const
`
      : ''
  const create = chain(
    '',
    `export const ${names.createRequest} = `,
    `z.strictObject(fields)${mask('omit', updateOnly)}${mask('partial', optional)}${transform}`,
    '',
  )
  const update = chain(
    '',
    `export const ${names.updateRequest} = `,
    `z.strictObject(fields)${mask('omit', createOnly)}.partial()${transform}`,
    '',
  )
  const exprs = schemas.map((s) => s.expr).join('\n')
  const usesInsertType = exprs.includes(`${insertType}[`)
  const imports = requestImports(exprs, renamed.length > 0, usesInsertType && names.table, ctx)
  const insertTypeLine = usesInsertType
    ? `\n/** ${article(spacedWords(model.name))} as an insert takes it: the types of its JSON fields. */\ntype ${insertType} = typeof ${names.table}.$inferInsert\n`
    : ''
  const createDoc = passwordColumn
    ? `/**\n * Body of \`POST /api/v1/${names.resource}\`. Unknown fields are rejected. \`password\` is hashed\n * by the app's \`hashPassword\` into \`${passwordColumn.name}\`: a hash is never taken from a caller.\n */`
    : `/** Body of \`POST /api/v1/${names.resource}\`. Unknown fields are rejected. */`
  return `${imports.join('\n')}
${insertTypeLine}
const fields = {
${schemas.map(({ name, expr }) => chain('  ', `${name}: `, expr, ',')).join('\n')}
}
${columnsConst}
${createDoc}
${create}

/** Body of \`PUT /api/v1/${names.resource}/{id}\`: any subset of the fields; only those change. */
${update}
`
}

/** A requests file's imports: the kiln helpers its schemas use, zod, the table of its insert type. */
function requestImports(
  exprs: string,
  renames: boolean,
  table: string | false,
  ctx: TemplateContext,
): string[] {
  const kiln = [
    ...(/\bdecimal\(/.test(exprs) ? ['decimal'] : []),
    ...(/\bint64\(/.test(exprs) ? ['int64'] : []),
    ...(/\bjsonValue</.test(exprs) ? ['jsonValue'] : []),
    ...(renames ? ['renameKeys'] : []),
    ...(usesUuid(exprs) ? ['uuid'] : []),
  ]
  return [
    ...(kiln.length > 0 ? [importLine(kiln, 'kilnjs/api')] : []),
    "import { z } from 'zod'",
    ...(table ? [importLine([table], ctx.schemaImport, !exprs.includes(`(${table}.`))] : []),
  ]
}

/** kiln's `uuid()` (not zod's `z.uuid()`) appears in the expressions. */
function usesUuid(exprs: string): boolean {
  return /(^|[^.\w])uuid\(/m.test(exprs)
}

/** `an order`, `a user`. */
function article(noun: string): string {
  return `${/^[aeio]/.test(noun) ? 'An' : 'A'} ${noun}`
}
