import { importLine } from './format.ts'
import type { ModelNames } from './names.ts'
import type { ModelTemplateInput, TemplateContext } from './template-input.ts'
import { idOf } from './templates.ts'

export interface AppTemplateInput {
  models: ModelTemplateInput[]
}

/** The relative imports `routes.ts` needs for one model, in the formatter's order. */
export function routeImports(names: ModelNames): Array<{ from: string; line: string }> {
  const from = {
    controller: `./controllers/${names.pluralFile}.js`,
    request: `./requests/${names.singularFile}.js`,
    resource: `./resources/${names.singularFile}.js`,
  }
  return [
    {
      from: from.controller,
      line: importLine([names.controller, names.definition], from.controller),
    },
    {
      from: from.request,
      line: importLine([names.createRequest, names.updateRequest], from.request),
    },
    { from: from.resource, line: importLine([names.resourceType], from.resource) },
  ]
}

/** `.route('/posts', postsController(context))` */
export function routeLine({ names }: Pick<ModelTemplateInput, 'names'>): string {
  return `    .route('/${names.resource}', ${names.controller}(context))`
}

/** One `apiResources` entry. */
export function resourceEntry(
  { model, names }: ModelTemplateInput,
  ctx: Pick<TemplateContext, 'dialect'>,
): string {
  const idType = idOf(model.primaryKey!, ctx.dialect).type
  return `  {
    name: '${names.resource}',
    model: '${names.model}',
    schema: ${names.resourceType},
    create: ${names.createRequest},
    update: ${names.updateRequest},${idType === 'integer' ? '' : `\n    idType: '${idType}',`}
    query: ${names.definition},
  },`
}

/** `export { postsController } from './controllers/posts.js'` */
export function indexExportLine({ names }: Pick<ModelTemplateInput, 'names'>): string {
  return `export { ${names.controller} } from './controllers/${names.pluralFile}.js'`
}

/** `routes.ts`: the \`/api/v1\` group and the docs routes. */
export function routesTemplate({ models }: AppTemplateInput, ctx: TemplateContext): string {
  const postgres = ctx.dialect === 'postgres'
  const dbType = postgres ? 'PostgresDb' : 'SqliteDb'
  const narrow = postgres ? 'postgresDb' : 'sqliteDb'
  const passwords = models.filter((m) => m.passwordColumn)
  const imports = models
    .flatMap(({ names }) => routeImports(names))
    .sort((a, b) => a.from.localeCompare(b.from))
    .map((i) => i.line)
  return (
    routesImports(imports, dbType, narrow) +
    apiDepsSource(postgres, dbType, passwords) +
    apiRoutesSource(models, ctx, narrow, passwords.length > 0)
  )
}

/** The imports of `routes.ts`: kiln's, then each model's schema, requests and controller. */
function routesImports(imports: string[], dbType: string, narrow: string): string {
  return `import { Hono } from 'hono'
import {
  type ApiDocsOptions,
  type ApiEnv,
  type ApiKeyProvider,
  apiDocs,
  apiGuard,
  createRealtime,
  createRecordCounter,
  currentKeyRoutes,
  idempotency,
  type OpenApiResource,
  type Realtime,
  type RecordCounter,
} from 'kilnjs/api'
import {
  createLogger,
  type KeyValueStore,
  type Logger,
  MemoryKeyValueStore,
  type RateLimiters,
} from 'kilnjs/core'
import { type Database, type ${dbType}, ${narrow} } from 'kilnjs/db'
${imports.join('\n')}

`
}

/** `ApiDeps` (what the app gives the group) and `ApiContext` (what controllers receive). */
function apiDepsSource(
  postgres: boolean,
  dbType: string,
  passwords: AppTemplateInput['models'],
): string {
  const hashDoc = passwords.map((m) => m.names.resource).join(', ')
  const hashField = passwords.length
    ? `
  /**
   * Hashes the \`password\` a request gives (${hashDoc}) before it is stored: your login's own
   * hasher, so the stored hash is one your login can check. Raw hashes are never accepted.
   */
  hashPassword: (password: string) => Promise<string>`
    : ''
  return `export interface ApiDeps {
  /** What \`createDatabase()\` returns; it must be a ${postgres ? 'Postgres (PostgreSQL or PGlite)' : 'SQLite'} database. */
  database: Database
  /** Verifies API keys: \`apiKeyProvider({ database })\` from ./api-keys.js, or your own. */
  apiKeys: ApiKeyProvider
  /** From \`createRateLimiters()\`: the group uses the limiter named \`api\`. */
  limiters: RateLimiters
  /** Cached list totals; give every instance the same store (Redis) when you run several. */
  counts?: RecordCounter
  /**
   * Where the first answers to POSTs with an \`Idempotency-Key\` are kept for 24 hours, so a
   * retry gets the same answer: give every instance the same store (\`shared.kv\`, Redis when
   * REDIS_URL is set). This process's memory by default.
   */
  idempotencyStore?: KeyValueStore${hashField}
  /**
   * Where writes publish their changes and \`GET …/events\` streams them from: give every
   * instance \`createRealtime({ shared, apiKeys })\` (Redis when REDIS_URL is set). This
   * process alone by default.
   */
  realtime?: Realtime
  /** Where server errors (5xx) are logged; standard output by default. */
  logger?: Logger
}

/** What each controller receives. */
export interface ApiContext {
  db: ${dbType}
  counts: RecordCounter
  realtime: Realtime${passwords.length ? `\n  hashPassword: ApiDeps['hashPassword']` : ''}
}

`
}

/** `apiRoutes` (the guarded group, one route per resource), `apiResources` and `docsRoutes`. */
function apiRoutesSource(
  models: AppTemplateInput['models'],
  ctx: TemplateContext,
  narrow: string,
  hashes: boolean,
): string {
  const byResource = [...models].sort((a, b) => a.names.resource.localeCompare(b.names.resource))
  return `/**
 * \`/api/v1\`: every route needs an API key, then passes the \`api\` rate limiter, which sees the
 * key (so a limit per key works); requests refused for their key are limited per client IP.
 * Request bodies are read up to 1 MiB (413 past it). Answers are private to the key
 * (\`Cache-Control: private, no-cache\`), with an \`ETag\` on GETs (304 when unchanged).
 * All of that is \`apiGuard\`, one middleware; apps that want the steps apart compose
 * \`privateCache()\`, \`twoStageThrottle()\`, \`apiKeyAuth()\` and \`bodyLimit()\` themselves.
 * Then \`idempotency()\` answers a retried POST (same \`Idempotency-Key\`) with its first answer.
 * Errors answer JSON (401, 403, 404, 422, 429…) through kiln's error handler, the app's
 * (\`app.onError(errorHandler(…))\`) or, when the app has another, \`apiGuard\`'s: mounting the
 * group with \`app.route('/', apiRoutes(…))\` is enough. The group has no \`onError\` of its own,
 * which Hono would pay for on every request with a wrapper around each of its handlers.
 * \`GET /api/v1/keys/self\` tells a key its own scopes (the MCP bridge lists only the
 * operations the key may call).
 */
export function apiRoutes({
  database,
  apiKeys,
  limiters,
  counts = createRecordCounter(),
  idempotencyStore = new MemoryKeyValueStore(),${hashes ? '\n  hashPassword,' : ''}
  logger = createLogger(),
  realtime = createRealtime({ apiKeys, logger }),
}: ApiDeps) {
  const context: ApiContext = { db: ${narrow}(database), counts, realtime${hashes ? ', hashPassword' : ''} }
  return new Hono<ApiEnv>()
    .basePath('/api/v1')
    .use(apiGuard({ apiKeys, limiters, limiter: 'api', logger }))
    .use(idempotency({ store: idempotencyStore }))
    .route('/keys', currentKeyRoutes())
${byResource.map(routeLine).join('\n')}
}

/** The resources as the OpenAPI document describes them. */
export const apiResources: OpenApiResource[] = [
${byResource.map((m) => resourceEntry(m, ctx)).join('\n')}
]

/**
 * \`GET /api/openapi.json\` and \`GET /api/docs\` (ReDoc) for the routes registered on \`app\`;
 * \`version\` and \`description\` go into the document's \`info\`.
 */
export function docsRoutes(
  options: Pick<ApiDocsOptions, 'app' | 'title' | 'version' | 'description'>,
) {
  return apiDocs({ ...options, resources: apiResources })
}
`
}

/** `index.ts`: the module index, one entry per controller. */
export function moduleIndexTemplate({ models }: AppTemplateInput): string {
  const sorted = [...models].sort((a, b) => a.names.pluralFile.localeCompare(b.names.pluralFile))
  return `export { apiKeyProvider, apiKeys } from './api-keys.js'
${sorted.map(indexExportLine).join('\n')}
export { type ApiContext, type ApiDeps, apiResources, apiRoutes, docsRoutes } from './routes.js'
`
}

/** `api-keys.ts`: the api_keys table of this app's dialect and the key provider. */
export function apiKeysTemplate(ctx: TemplateContext): string {
  const table = ctx.dialect === 'postgres' ? 'apiKeysPg' : 'apiKeysSqlite'
  return `import { createDatabaseApiKeyProvider, type DatabaseApiKeyProviderOptions } from 'kilnjs/api'

/** The \`api_keys\` table (created by kiln's migration and ./migrations). */
export { ${table} as apiKeys } from 'kilnjs/db'

/** The app's \`ApiKeyProvider\`: keys in \`api_keys\`, with revocation and expiry checks. */
export function apiKeyProvider(options: DatabaseApiKeyProviderOptions) {
  return createDatabaseApiKeyProvider(options)
}
`
}
