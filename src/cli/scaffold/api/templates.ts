import type { ColumnInfo } from '../../../db/models/columns.ts'
import { spacedWords } from '../../../db/models/inflect.ts'
import type { ModelInfo } from '../../../db/models/registry.ts'
import { aggregateRoute } from './aggregate-route.ts'
import {
  INT32,
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
  requestSchema,
  resourceSchema,
  resourceValue,
} from './fields.ts'
import { call, chain, importLine, LINE_WIDTH, property } from './format.ts'
import { type GeneratedRelation, listQueryBlock } from './list-query.ts'
import type { ModelNames } from './names.ts'

/** What the templates need to know about the app. */
export interface TemplateContext {
  dialect: 'postgres' | 'sqlite'
  /** Import specifier of the schema module from `<out>/<folder>/`, e.g. `../../schema.js`. */
  schemaImport: string
}

export interface ModelTemplateInput {
  model: ModelInfo
  names: ModelNames
  /** Columns the resource shows (exclusions applied). */
  shown: ColumnInfo[]
  /** Columns left out, for the resource's doc comment. */
  hidden: ColumnInfo[]
  /** Body fields of a create request, and of an update request (never the primary key). */
  createFields: ColumnInfo[]
  updateFields: ColumnInfo[]
  /** The column a `password` input is hashed into (`password_hash`), when the model has one. */
  passwordColumn: ColumnInfo | undefined
  /** Relations `include=` offers, from foreign keys between the generated models. */
  relations?: GeneratedRelation[]
}

/** The resource's `{id}` as the path gives it: the parse call and the OpenAPI type. */
export function idOf(pk: ColumnInfo, dialect: 'postgres' | 'sqlite') {
  const raw = `c.req.param('id')`
  const sqlType = pk.sqlType.toLowerCase()
  if (pk.dataType === 'integer' || pk.dataType === 'number') {
    if (dialect === 'postgres' && INT32.test(sqlType)) {
      return {
        parse: 'parseId',
        expr: `parseId(${raw}, { max: 2_147_483_647 })`,
        type: 'integer',
        tsType: 'number',
      }
    }
    if (dialect === 'postgres' && /^(smallint|int2|smallserial)$/.test(sqlType)) {
      return {
        parse: 'parseId',
        expr: `parseId(${raw}, { max: 32_767 })`,
        type: 'integer',
        tsType: 'number',
      }
    }
    return { parse: 'parseId', expr: `parseId(${raw})`, type: 'integer', tsType: 'number' }
  }
  if (pk.dataType === 'bigint') {
    return {
      parse: 'parseBigIntId',
      expr: `parseBigIntId(${raw})`,
      type: 'integer',
      tsType: 'bigint',
    }
  }
  if (pk.dataType === 'string' && sqlType === 'uuid') {
    return { parse: 'parseUuid', expr: `parseUuid(${raw})`, type: 'uuid', tsType: 'string' }
  }
  if (pk.dataType === 'string') {
    const options = pk.length === undefined ? '' : `, { maxLength: ${pk.length} }`
    return {
      parse: 'parseTextId',
      expr: `parseTextId(${raw}${options})`,
      type: 'string',
      tsType: 'string',
    }
  }
  throw new TypeError(`The primary key ${pk.name} (${pk.sqlType}) cannot be a path identifier`)
}

/**
 * The value a timestamp column gets from the controller, read from one clock: the database's
 * `now()` on Postgres (the clock `defaultNow()` reads); on SQLite, which runs in the app's
 * process, the app's clock read once per request (`now`). A `timestamp` without time zone
 * takes UTC, as Drizzle reads it.
 */
function now(
  column: ColumnInfo,
  dialect: 'postgres' | 'sqlite',
  clock = 'now',
): string | undefined {
  if (column.dataType !== 'date' && column.dataType !== 'string') return undefined
  if (dialect === 'postgres') {
    return /with time zone/i.test(column.sqlType) ? 'sql`now()`' : "sql`now() at time zone 'utc'`"
  }
  return column.dataType === 'date' ? clock : `${clock}.toISOString()`
}

function timestampColumn(model: ModelInfo, name: 'created_at' | 'updated_at') {
  const key = name === 'created_at' ? 'createdAt' : 'updatedAt'
  return model.columns.find((column) => column.name === name || column.key === key)
}

/** `controllers/<resource>.ts`: index, show, store, update and destroy on one Hono sub-app. */
export function controllerTemplate(template: ModelTemplateInput, ctx: TemplateContext): string {
  const { model, names, passwordColumn, relations = [] } = template
  const pk = model.primaryKey
  if (!pk) throw new TypeError(`${model.name} has no single-column primary key`)
  const t = names.table
  const row = names.variable
  const id = idOf(pk, ctx.dialect)
  // Soft delete: a `deleted_at` column hides a record instead of deleting it.
  const deletedAt = model.columns.find((c) => c.name === 'deleted_at' || c.key === 'deletedAt')
  const trashedAt = deletedAt && now(deletedAt, ctx.dialect, 'new Date()')
  const live = (key: string) =>
    deletedAt
      ? `and(eq(${t}.${pk.key}, ${key}), isNull(${t}.${deletedAt.key}))`
      : `eq(${t}.${pk.key}, ${key})`
  // The caller's rows only (the list query's `rows`): another record is a 404 to it.
  const where = 'byId(id, caller)'
  const updatedAt = timestampColumn(model, 'updated_at')
  const touched = updatedAt ? now(updatedAt, ctx.dialect, 'new Date()') : undefined
  // Timestamps the database does not fill are set here, as Laravel's models do; then both are,
  // from one reading of one clock, so updated_at never differs from created_at on create.
  const timestamps = [timestampColumn(model, 'created_at'), updatedAt].filter(
    (column): column is ColumnInfo => column !== undefined && !!now(column, ctx.dialect),
  )
  const stamped = timestamps.some((column) => !column.hasDefault) ? timestamps : []
  const readClock =
    ctx.dialect === 'sqlite' && stamped.length > 0 ? '\n      const now = new Date()' : ''
  const optionalPassword = passwordColumn && (passwordColumn.nullable || passwordColumn.hasDefault)
  // The hash's local name: never `password`, which holds what the request gave.
  const hashName = passwordColumn?.key === 'password' ? 'hashedPassword' : passwordColumn?.key
  const hashEntry = passwordColumn
    ? passwordColumn.key === hashName
      ? hashName
      : `${passwordColumn.key}: ${hashName}`
    : undefined
  const setValues = [
    '...input',
    ...(hashEntry ? [hashEntry] : []),
    ...(touched ? [`${updatedAt!.key}: ${touched}`] : []),
  ]
  const set = (indent: string) => objectCall(indent, '.set', setValues)
  const updateLines = touched
    ? [
        `      const [${row}] = await db`,
        `        .update(${t})`,
        set('        '),
        `        .where(${where})`,
        `        .returning()`,
        `        .catch(rejectConstraintViolation)`,
      ].join('\n')
    : [
        `      const [${row}] = hasFields(${setValues.length === 1 ? 'input' : `{ ${setValues.join(', ')} }`})`,
        `        ? await db`,
        `            .update(${t})`,
        set('            '),
        `            .where(${where})`,
        `            .returning()`,
        `            .catch(rejectConstraintViolation)`,
        chain('        ', ': await ', `db.select().from(${t}).where(${where})`, '', '            '),
      ].join('\n')
  const kiln = [
    'type ApiEnv',
    'type ApiKeyInfo',
    'checkIfMatch',
    'found',
    ...(touched ? [] : ['hasFields']),
    ...new Set(relations.map((relation) => relation.helper)),
    'defineListQuery',
    id.parse,
    'parseBulkUpdate',
    'parseCreateBody',
    'parseIdList',
    'parseJsonBody',
    ...(deletedAt ? [] : ['rejectBlockedDelete']),
    'rejectConstraintViolation',
    'runAggregateQuery',
    'rowsWhere',
    'runListQuery',
    'scopeGuard',
    ...(deletedAt ? ['softDeletes'] : []),
    'writeEach',
  ].sort((a, b) => a.replace('type ', '').localeCompare(b.replace('type ', '')))
  const respond = (status = '') => {
    const line = `      return c.json({ data: ${names.toResource}(found(${row})) }${status})`
    if (line.length <= LINE_WIDTH) return line
    return `${call('      ', `const data = ${names.toResource}`, [`found(${row})`], '')}\n      return c.json({ data }${status})`
  }
  const runShow = ctx.dialect === 'postgres' ? 'execute' : 'all'
  // The record by id among the caller's rows, and what `show` answers (If-Match compares its ETag).
  const shownBlock = [
    "  /** The record `id` among the rows the caller may reach (the list query's `rows`). */",
    `  const byId = (id: ${id.tsType}, caller: ApiKeyInfo) =>`,
    call(
      '    ',
      'and',
      [
        `eq(${t}.${pk.key}, id)`,
        ...(deletedAt ? [`isNull(${t}.${deletedAt.key})`] : []),
        `rowsWhere(${names.query}, caller)`,
      ],
      '',
    ),
    '  /** The record as the caller may read it: by the prepared query when no row filter applies. */',
    `  const find = async (id: ${id.tsType}, caller: ApiKeyInfo) => {`,
    `    if (!${names.query}.rows) {`,
    '      showQuery ??= prepareShow()',
    `      const [current] = await showQuery.${runShow}({ id })`,
    '      return current',
    '    }',
    chain('    ', 'const [current] = await ', `db.select().from(${t}).where(byId(id, caller))`, ''),
    '    return current',
    '  }',
    "  /** The record as `show` answers it: a write's If-Match is compared with its ETag. */",
    `  const shown = async (id: ${id.tsType}, caller: ApiKeyInfo) => {`,
    '    const current = await find(id, caller)',
    `    return current && { data: ${names.toResource}(current) }`,
    '  }',
  ].join('\n')
  const input = passwordColumn ? '{ password, ...input }' : 'input'
  const body = (schema: string) =>
    call('      ', `const ${input} = await parseJsonBody`, ['c.req.raw', schema], '')
  const hashed = 'password === undefined ? undefined : await hashPassword(password)'
  const passwordHash = !passwordColumn
    ? ''
    : `      const ${hashName} = ${hashed}`.length <= LINE_WIDTH
      ? `\n      const ${hashName} = ${hashed}`
      : `\n      const ${hashName} =\n        ${hashed}`
  // Postgres prepared statements are named per connection; SQLite's are anonymous.
  const prepareName = (action: string) =>
    ctx.dialect === 'postgres' ? `'kiln_${model.tableName}_${action}'` : ''
  const hashCall = (optional: boolean) =>
    optional
      ? 'password === undefined ? undefined : await hashPassword(password)'
      : 'await hashPassword(password)'
  const createBody = bodyCall(
    'parseCreateBody',
    'const { inputs, many }',
    [names.createRequest],
    [
      '...input',
      ...(passwordColumn ? [`${passwordColumn.key}: ${hashCall(!!optionalPassword)}`] : []),
      ...stamped.map((column) => `${column.key}: ${now(column, ctx.dialect)}`),
    ],
    input,
  )
  const bulkHandlers = bulkTemplate({
    table: t,
    where,
    query: names.query,
    toResource: names.toResource,
    tableName: model.tableName,
    changes: bodyCall(
      'parseBulkUpdate',
      'const changes',
      [names.updateRequest, 'readId'],
      ['...input', ...(passwordColumn ? [`${passwordColumn.key}: ${hashCall(true)}`] : [])],
      input,
    ),
    set: touched ? `{ ...input, ${updatedAt!.key}: ${touched} }` : 'input',
    trash: deletedAt && { key: deletedAt.key, now: trashedAt! },
    pk: pk.key,
    idExpr: id.expr,
  })
  const tables = [...new Set([t, ...relations.flatMap((relation) => relation.tables)])].sort()
  const deps = ['db', 'counts', ...(passwordColumn ? ['hashPassword'] : [])].join(', ')
  const drizzle = deletedAt ? 'and, eq, isNull, sql' : 'and, eq, sql'
  return `import { ${drizzle} } from 'drizzle-orm'
import { Hono } from 'hono'
import {
${kiln.map((name) => `  ${name},`).join('\n')}
} from 'kilnjs/api'
${importLine(tables, ctx.schemaImport)}
${importLine([names.createRequest, names.updateRequest], `../requests/${names.singularFile}.js`)}
${importLine([names.toResource], `../resources/${names.singularFile}.js`)}
import type { ApiContext } from '../routes.js'

/** Scopes a key needs on these routes (\`*\` passes every check): change them per route here. */
const read = scopeGuard('${names.resource}:read')
const write = scopeGuard('${names.resource}:write')

/** The primary key as a path or a bulk request names it; one no record can have is a 404. */
const readId = (raw: string) => ${id.expr.replace("c.req.param('id')", 'raw')}
${
  deletedAt
    ? `
/**
 * Soft delete: DELETE sets \`${deletedAt.name}\`, and lists and \`show\` hide such records. Keys with
 * these scopes list them with \`filter[trashed]=with\` or \`only\`; restore is \`POST /{id}/restore\`.
 */
const trashed = softDeletes(${t}.${deletedAt.key}, '${names.resource}:write')
`
    : ''
}
${listQueryBlock(template, relations)}

/**
 * \`/api/v1/${names.resource}\`: index, aggregate, show, store (one record or an array), update (PUT or
 * PATCH), destroy${deletedAt ? ', restore' : ''}, and the bulk updateMany (PATCH \`/\`) and destroyMany (DELETE \`/?ids=\`).
 */
export function ${names.controller}({ ${deps} }: ApiContext) {
  // Prepared on the first request, then reused: a request only binds its id. Not while the
  // routes are built: SQLite reads the table to prepare, and an app started before its
  // migrations ran answers 503 until they do.
  const prepareShow = () =>
    db
      .select()
      .from(${t})
      .where(${live("sql.placeholder('id')")})
      .prepare(${prepareName('show')})
  let showQuery: ReturnType<typeof prepareShow> | undefined
${shownBlock}
  return new Hono<ApiEnv>()
    .get('/', read, async function index(c) {
      // include= reads other resources under their own scopes: the key is the caller. A client
      // that hangs up cancels the query (signal).
      const caller = c.get('apiKey')
${listCall(names.query, deletedAt ? ['softDelete: trashed'] : [])}
      return c.json(page)
    })
${aggregateRoute(names.query)}
    .post('/', write, async function store(c) {${readClock}
${createBody}
${chain('      ', 'const rows = await ', `db.insert(${t}).values(inputs).returning().catch(rejectConstraintViolation)`, '')}
      await counts.invalidate('${model.tableName}')
      const data = rows.map(${names.toResource})
      return c.json({ data: many ? data : found(data[0]) }, 201)
    })
    .get('/:id', read, async function show(c) {
      const id = ${id.expr}
      const ${row} = await find(id, c.get('apiKey'))
${respond()}
    })
    .on(['PUT', 'PATCH'], '/:id', write, async function update(c) {
      const id = ${id.expr}
      const caller = c.get('apiKey')
${body(names.updateRequest)}${passwordHash}
      await checkIfMatch(c.req.raw, () => shown(id, caller))
${updateLines}
${respond()}
    })
    .delete('/:id', write, async function destroy(c) {
      const id = ${id.expr}
      const caller = c.get('apiKey')
      await checkIfMatch(c.req.raw, () => shown(id, caller))
${
  deletedAt
    ? `      const [${row}] = await db
        .update(${t})
        .set({ ${deletedAt.key}: ${trashedAt} })
        .where(${where})
        .returning()
        .catch(rejectConstraintViolation)`
    : `      const [${row}] = await db
        .delete(${t})
        .where(${where})
        .returning()
        .catch(rejectBlockedDelete)`
}
      found(${row})
      await counts.invalidate('${model.tableName}')
      return c.json({ message: 'Deleted' })
    })
${bulkHandlers}
}
`
}

/**
 * `const x = await parseXxx(c.req.raw, Schema)`, with the function that turns each valid input
 * into the values to write when there is more to it than the input (a hashed password,
 * timestamps).
 */
function bodyCall(
  parse: string,
  target: string,
  schema: string[],
  values: string[],
  input: string,
): string {
  const indent = '      '
  const head = `${target} = await ${parse}`
  if (values.length === 1) return call(indent, head, ['c.req.raw', ...schema], '')
  const async = values.some((value) => value.includes('await ')) ? 'async ' : ''
  const arrow = `${async}(${input}) => ({`
  const object = values.map((value) => `${indent}    ${value},`).join('\n')
  const hugged = `${indent}${head}(c.req.raw, ${schema.join(', ')}, ${arrow}`
  if (hugged.length <= LINE_WIDTH)
    return `${hugged}\n${object.replace(/^ {2}/gm, '')}\n${indent}}))`
  const args = schema.map((arg) => `${indent}  ${arg},`)
  return [
    `${indent}${head}(`,
    `${indent}  c.req.raw,`,
    ...args,
    `${indent}  ${arrow}`,
    object,
    `${indent}  }),`,
    `${indent})`,
  ].join('\n')
}

/** `updateMany` (PATCH `/`) and `destroyMany` (DELETE `/?ids=`): all or none, in one transaction. */
function bulkTemplate(parts: {
  table: string
  where: string
  /** The list query: its row filter keeps restore to the caller's rows. */
  query: string
  toResource: string
  tableName: string
  changes: string
  set: string
  /** The soft delete's column and the value a delete sets it to. */
  trash?: { key: string; now: string } | undefined
  pk: string
  idExpr: string
}): string {
  const { table, where, toResource, tableName, changes, set, trash } = parts
  const indent = '        '
  const statement = `.update(${table}).set(${set}).where(${where}).returning()`
  // An object with a spread is not a simple argument: the formatter breaks such a chain.
  const update = chain(indent, 'tx', statement, ',', `${indent}  `, set !== 'input')
  const removal = trash
    ? `.update(${table}).set({ ${trash.key}: ${trash.now} }).where(${where}).returning()`
    : `.delete(${table}).where(${where}).returning()`
  const remove = chain(indent, 'tx', removal, ',')
  return `    .patch('/', write, async function updateMany(c) {
      const caller = c.get('apiKey')
${changes}
      const rows = await writeEach(db, changes, (tx, { id, input }) =>
${update}
      ).catch(rejectConstraintViolation)
      return c.json({ data: rows.map(${toResource}) })
    })
    .delete('/', write, async function destroyMany(c) {
      const caller = c.get('apiKey')
      const ids = parseIdList(c.req.raw, readId)
      await writeEach(db, ids, (tx, id) =>
${remove}
      ).catch(${trash ? 'rejectConstraintViolation' : 'rejectBlockedDelete'})
      await counts.invalidate('${tableName}')
      return c.json({ message: 'Deleted', count: ids.length })
    })${trash ? restoreTemplate(parts, trash) : ''}`
}

/** `POST /{id}/restore`: clears the soft delete's column (a record not in the trash stays as is). */
function restoreTemplate(
  parts: {
    table: string
    query: string
    toResource: string
    tableName: string
    pk: string
    idExpr: string
  },
  trash: { key: string },
): string {
  const { table, query, toResource, tableName, pk, idExpr } = parts
  const respond = `      return c.json({ data: ${toResource}(found(row)) })`
  return `
    .post('/:id/restore', write, async function restore(c) {
      const id = ${idExpr}
      const caller = c.get('apiKey')
${call('      ', 'const where = and', [`eq(${table}.${pk}, id)`, `rowsWhere(${query}, caller)`], '')}
      const [row] = await db
        .update(${table})
        .set({ ${trash.key}: null })
        .where(where)
        .returning()
        .catch(rejectConstraintViolation)
      await counts.invalidate('${tableName}')
${respond.length <= LINE_WIDTH ? respond : `${call('      ', `const data = ${toResource}`, ['found(row)'], '')}\n      return c.json({ data })`}
    })`
}

/** `.name(input)`, or `.name({ ...input, a: b })`, the object broken one entry per line when long. */
function objectCall(indent: string, name: string, entries: string[]): string {
  if (entries.length === 1) return `${indent}${name}(${entries[0]!.replace('...', '')})`
  const line = `${indent}${name}({ ${entries.join(', ')} })`
  if (line.length <= LINE_WIDTH) return line
  return `${indent}${name}({\n${entries.map((e) => `${indent}  ${e},`).join('\n')}\n${indent}})`
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
  return `${typedJson ? `${importLine(['jsonValue'], 'kilnjs/api')}\n` : ''}import { z } from 'zod'
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
  const kiln = [
    ...(/\bdecimal\(/.test(exprs) ? ['decimal'] : []),
    ...(/\bint64\(/.test(exprs) ? ['int64'] : []),
    ...(/\bjsonValue</.test(exprs) ? ['jsonValue'] : []),
    ...(renamed.length > 0 ? ['renameKeys'] : []),
  ]
  const usesInsertType = exprs.includes(`${insertType}[`)
  const imports = [
    ...(kiln.length > 0 ? [importLine(kiln, 'kilnjs/api')] : []),
    "import { z } from 'zod'",
    ...(usesInsertType
      ? [importLine([names.table], ctx.schemaImport, !exprs.includes(`(${names.table}.`))]
      : []),
  ]
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

/** `an order`, `a user`. */
function article(noun: string): string {
  return `${/^[aeio]/.test(noun) ? 'An' : 'A'} ${noun}`
}

/** The index's `runListQuery` call, laid out as the formatter lays it out (its options hugged). */
function listCall(query: string, more: string[] = []): string {
  const indent = '      '
  const head = `${indent}const page = await runListQuery(${query}, c.req.url, {`
  const options = ['db', 'counts', 'caller', 'signal: c.req.raw.signal', ...more]
  const line = `${head} ${options.join(', ')} })`
  if (line.length <= LINE_WIDTH) return line
  if (head.length > LINE_WIDTH) {
    return call(
      indent,
      'const page = await runListQuery',
      [query, 'c.req.url', `{ ${options.join(', ')} }`],
      '',
    )
  }
  return `${head}\n${options.map((option) => `${indent}  ${option},`).join('\n')}\n${indent}})`
}
