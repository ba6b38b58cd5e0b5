import type { ColumnInfo } from '../../../db/models/columns.ts'
import type { ModelInfo } from '../../../db/models/registry.ts'
import { INT32, requestSchema, resourceSchema, resourceValue } from './fields.ts'
import { call, chain, importLine, LINE_WIDTH, property } from './format.ts'
import type { ModelNames } from './names.ts'

/** What the templates need to know about the app. */
export interface TemplateContext {
  dialect: 'postgres' | 'sqlite'
  /** Import specifier of the schema module from `<out>/<folder>/`, e.g. `../../schema.ts`. */
  schemaImport: string
}

export interface ModelTemplateInput {
  model: ModelInfo
  names: ModelNames
  /** Columns the resource shows (exclusions applied). */
  shown: ColumnInfo[]
  /** Columns left out, for the resource's doc comment. */
  hidden: ColumnInfo[]
}

/** `controllers/<resource>.ts`: index, show, store, update and destroy on one Hono sub-app. */
export function controllerTemplate(
  { model, names }: ModelTemplateInput,
  ctx: TemplateContext,
): string {
  const pk = model.primaryKey
  if (!pk) throw new TypeError(`${model.name} has no single-column primary key`)
  const t = names.table
  const row = names.variable
  const numericId = pk.dataType === 'integer' || pk.dataType === 'number'
  const int32Id = numericId && ctx.dialect === 'postgres' && INT32.test(pk.sqlType)
  const idExpr = !numericId
    ? `c.req.param('id')`
    : int32Id
      ? `parseId(c.req.param('id'), { max: 2_147_483_647 })`
      : `parseId(c.req.param('id'))`
  const where = `eq(${t}.${pk.key}, id)`
  const updatedAt = model.columns.find(
    (column) => column.name === 'updated_at' || column.key === 'updatedAt',
  )
  const touched =
    updatedAt?.dataType === 'date'
      ? `new Date()`
      : updatedAt?.dataType === 'string'
        ? `new Date().toISOString()`
        : undefined
  const update = touched
    ? [
        `      const [${row}] = await db`,
        `        .update(${t})`,
        `        .set({ ...input, ${updatedAt!.key}: ${touched} })`,
        `        .where(${where})`,
        `        .returning()`,
        `        .catch(rejectConstraintViolation)`,
      ].join('\n')
    : [
        `      const [${row}] = hasFields(input)`,
        `        ? await db`,
        `            .update(${t})`,
        `            .set(input)`,
        `            .where(${where})`,
        `            .returning()`,
        `            .catch(rejectConstraintViolation)`,
        chain('        ', ': await ', `db.select().from(${t}).where(${where})`, '', '            '),
      ].join('\n')
  const kiln = [
    'type ApiEnv',
    'found',
    ...(touched ? [] : ['hasFields']),
    'paginated',
    ...(numericId ? ['parseId'] : []),
    'parseJsonBody',
    'parsePageQuery',
    'rejectBlockedDelete',
    'rejectConstraintViolation',
  ]
  const respond = (status = '') => {
    const line = `      return c.json({ data: ${names.toResource}(found(${row})) }${status})`
    if (line.length <= LINE_WIDTH) return line
    return `${call('      ', `const data = ${names.toResource}`, [`found(${row})`], '')}\n      return c.json({ data }${status})`
  }
  const body = (schema: string) =>
    call('      ', 'const input = await parseJsonBody', ['c.req.raw', schema], '')
  // Postgres prepared statements are named per connection; SQLite's are anonymous.
  const prepareName = (action: string) =>
    ctx.dialect === 'postgres' ? `'kiln_${model.tableName}_${action}'` : ''
  const run = ctx.dialect === 'postgres' ? 'execute' : 'all'
  return `import { eq, sql } from 'drizzle-orm'
import { Hono } from 'hono'
import {
${kiln.map((name) => `  ${name},`).join('\n')}
} from 'kiln/api'
${importLine([t], ctx.schemaImport)}
${importLine([names.createRequest, names.updateRequest], `../requests/${names.singularFile}.ts`)}
${importLine([names.toResource], `../resources/${names.singularFile}.ts`)}
import type { ApiContext } from '../routes.ts'

/** \`/api/v1/${names.resource}\`: index, show, store, update and destroy. */
export function ${names.controller}({ db, counts }: ApiContext) {
  // Prepared once: a request only binds its values, the SQL is not built again.
  const pageQuery = db
    .select()
    .from(${t})
    .orderBy(${t}.${pk.key})
    .limit(sql.placeholder('limit'))
    .offset(sql.placeholder('offset'))
    .prepare(${prepareName('index')})
  const showQuery = db
    .select()
    .from(${t})
    .where(eq(${t}.${pk.key}, sql.placeholder('id')))
    .prepare(${prepareName('show')})
  return new Hono<ApiEnv>()
    .get('/', async function index(c) {
      const page = parsePageQuery(c.req.query())
${chain('      ', 'const rows = await ', `pageQuery.${run}({ limit: page.perPage, offset: page.offset })`, '')}
${call('      ', 'const total = await counts.total', [`'${model.tableName}'`, 'page', 'rows.length', `db.$count(${t})`], '')}
      const data = rows.map(${names.toResource})
      return c.json(paginated(data, page, total, c.req.path))
    })
    .post('/', async function store(c) {
${body(names.createRequest)}
      const [${row}] = await db
        .insert(${t})
        .values(input)
        .returning()
        .catch(rejectConstraintViolation)
      await counts.invalidate('${model.tableName}')
${respond(', 201')}
    })
    .get('/:id', async function show(c) {
      const id = ${idExpr}
      const [${row}] = await showQuery.${run}({ id })
${respond()}
    })
    .put('/:id', async function update(c) {
      const id = ${idExpr}
${body(names.updateRequest)}
${update}
${respond()}
    })
    .delete('/:id', async function destroy(c) {
      const id = ${idExpr}
      const [${row}] = await db
        .delete(${t})
        .where(${where})
        .returning()
        .catch(rejectBlockedDelete)
      found(${row})
      await counts.invalidate('${model.tableName}')
      return c.json({ message: 'Deleted' })
    })
}
`
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
  return `import { z } from 'zod'
${importLine([names.table], ctx.schemaImport, true)}

/**
 * A ${words(model.name)} as the API returns it.${hiddenNote}
 */
export const ${names.resourceType} = z.object({
${shown.map((column) => chain('  ', `${column.name}: `, resourceSchema(column), ',')).join('\n')}
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
  { model, names }: ModelTemplateInput,
  ctx: TemplateContext,
): string {
  const fields = model.writableFields
  const optional = fields.filter((column) => column.nullable || column.hasDefault)
  const renamed = fields.filter((column) => column.name !== column.key)
  const transform = renamed.length > 0 ? '.transform((body) => renameKeys(body, columns))' : ''
  const mask =
    optional.length > 0
      ? `.partial({ ${optional.map((column) => `${column.name}: true`).join(', ')} })`
      : ''
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
    `z.strictObject(fields)${mask}${transform}`,
    '',
  )
  const update = chain(
    '',
    `export const ${names.updateRequest} = `,
    `z.strictObject(fields).partial()${transform}`,
    '',
  )
  return `${renamed.length > 0 ? "import { renameKeys } from 'kiln/api'\n" : ''}import { z } from 'zod'

const fields = {
${fields.map((column) => chain('  ', `${column.name}: `, requestSchema(column, ctx.dialect), ',')).join('\n')}
}
${columnsConst}
/** Body of \`POST /api/v1/${names.resource}\`. Unknown fields are rejected. */
${create}

/** Body of \`PUT /api/v1/${names.resource}/{id}\`: any subset of the fields; only those change. */
${update}
`
}

export interface AppTemplateInput {
  models: Array<{ model: ModelInfo; names: ModelNames }>
}

/** `routes.ts`: the \`/api/v1\` group and the docs routes. */
export function routesTemplate({ models }: AppTemplateInput, ctx: TemplateContext): string {
  const dbType = ctx.dialect === 'postgres' ? 'PostgresDatabase' : 'SqliteDatabase'
  const sorted = [...models].sort((a, b) => a.names.resource.localeCompare(b.names.resource))
  const byFile = (key: 'pluralFile' | 'singularFile') =>
    [...models].sort((a, b) => a.names[key].localeCompare(b.names[key]))
  const imports = [
    ...byFile('pluralFile').map(
      ({ names }) => `import { ${names.controller} } from './controllers/${names.pluralFile}.ts'`,
    ),
    ...byFile('singularFile').map(({ names }) =>
      importLine([names.createRequest, names.updateRequest], `./requests/${names.singularFile}.ts`),
    ),
    ...byFile('singularFile').map(
      ({ names }) => `import { ${names.resourceType} } from './resources/${names.singularFile}.ts'`,
    ),
  ]
  return `import { Hono } from 'hono'
import {
  type ApiDocsOptions,
  type ApiEnv,
  type ApiKeyProvider,
  apiDocs,
  apiKeyAuth,
  createRecordCounter,
  type OpenApiResource,
  type RateLimiters,
  type RecordCounter,
  throttle,
} from 'kiln/api'
import type { ${dbType} } from 'kiln/db'
${imports.join('\n')}

export interface ApiDeps {
  database: ${dbType}
  /** Verifies API keys: \`apiKeyProvider({ database })\` from ./api-keys.ts, or your own. */
  apiKeys: ApiKeyProvider
  /** From \`createRateLimiters()\`: the group uses the limiter named \`api\`. */
  limiters: RateLimiters
  /** Cached list totals; give every instance the same store (Redis) when you run several. */
  counts?: RecordCounter
}

/** What each controller receives. */
export interface ApiContext {
  db: ${dbType}['db']
  counts: RecordCounter
}

/** \`/api/v1\`: every route passes the \`api\` rate limiter and needs an API key. */
export function apiRoutes({
  database,
  apiKeys,
  limiters,
  counts = createRecordCounter(),
}: ApiDeps) {
  const context: ApiContext = { db: database.db, counts }
  return new Hono<ApiEnv>()
    .basePath('/api/v1')
    .use(throttle(limiters, 'api'))
    .use(apiKeyAuth({ provider: apiKeys }))
${sorted.map(({ names }) => `    .route('/${names.resource}', ${names.controller}(context))`).join('\n')}
}

/** The resources as the OpenAPI document describes them. */
export const apiResources: OpenApiResource[] = [
${sorted
  .map(
    ({ names }) =>
      `  {
    name: '${names.resource}',
    model: '${names.model}',
    schema: ${names.resourceType},
    create: ${names.createRequest},
    update: ${names.updateRequest},
  },`,
  )
  .join('\n')}
]

/** \`GET /api/openapi.json\` and \`GET /api/docs\` (ReDoc) for the routes registered on \`app\`. */
export function docsRoutes({ app, title }: Pick<ApiDocsOptions, 'app' | 'title'>) {
  return apiDocs({ app, title, resources: apiResources })
}
`
}

/** `index.ts`: the module index, one entry per controller. */
export function moduleIndexTemplate({ models }: AppTemplateInput): string {
  const sorted = [...models].sort((a, b) => a.names.pluralFile.localeCompare(b.names.pluralFile))
  return `export { apiKeyProvider, apiKeys } from './api-keys.ts'
${sorted.map(({ names }) => `export { ${names.controller} } from './controllers/${names.pluralFile}.ts'`).join('\n')}
export { type ApiContext, type ApiDeps, apiResources, apiRoutes, docsRoutes } from './routes.ts'
`
}

/** `api-keys.ts`: the api_keys table of this app's dialect and the key provider. */
export function apiKeysTemplate(ctx: TemplateContext): string {
  const table = ctx.dialect === 'postgres' ? 'apiKeysPg' : 'apiKeysSqlite'
  return `import { createDatabaseApiKeyProvider, type DatabaseApiKeyProviderOptions } from 'kiln/api'

/** The \`api_keys\` table (created by kiln's migration and ./migrations). */
export { ${table} as apiKeys } from 'kiln/db'

/** The app's \`ApiKeyProvider\`: keys in \`api_keys\`, with revocation and expiry checks. */
export function apiKeyProvider(options: DatabaseApiKeyProviderOptions) {
  return createDatabaseApiKeyProvider(options)
}
`
}

function words(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase()
}
