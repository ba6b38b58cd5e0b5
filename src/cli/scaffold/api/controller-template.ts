import { aggregateRoute } from './aggregate-route.ts'
import { bulkRoutes, restoreRoute } from './controller-bulk.ts'
import { type ControllerFacts, controllerFacts } from './controller-facts.ts'
import {
  destroyRoute,
  indexRoute,
  recordLookup,
  showRoute,
  storeRoute,
  updateRoute,
} from './controller-routes.ts'
import { importLine, LINE_WIDTH } from './format.ts'
import { listQueryBlock } from './list-query.ts'
import type { ModelTemplateInput, TemplateContext } from './template-input.ts'

/**
 * `controllers/<resource>.ts`: index, aggregate, show, store, update, destroy, the bulk routes
 * and (soft delete) restore on one Hono sub-app. Each part is written by its own function, in
 * the order it stands in the file.
 */
export function controllerTemplate(template: ModelTemplateInput, ctx: TemplateContext): string {
  const f = controllerFacts(template, ctx)
  const { names, deletedAt, passwordColumn } = f
  const deps = ['db', 'counts', ...(passwordColumn ? ['hashPassword'] : [])].join(', ')
  return `${controllerImports(f)}

${controllerScopes(f)}
${listQueryBlock(template, template.relations ?? [])}

${declareRequestsCall(f)}

/**
 * \`/api/v1/${names.resource}\`: index, aggregate, show, store (one record or an array), update (PUT or
 * PATCH), destroy${deletedAt ? ', restore' : ''}, and the bulk updateMany (PATCH \`/\`) and destroyMany (DELETE \`/?ids=\`).
 */
export function ${names.controller}({ ${deps} }: ApiContext) {
${recordLookup(f)}
  return new Hono<ApiEnv>()
${indexRoute(f)}
${aggregateRoute(names.query)}
${storeRoute(f)}
${showRoute(f)}
${updateRoute(f)}
${destroyRoute(f)}
${bulkRoutes(f)}${deletedAt ? restoreRoute(f) : ''}
}
`
}

/**
 * `declareRequests(posts, { create: CreatePostRequest, update: UpdatePostRequest })`, with the
 * object broken over lines (as the formatter hugs a last object argument) when too long.
 */
function declareRequestsCall(f: ControllerFacts): string {
  const { t, names } = f
  const doc =
    '/** What create and update take, here and through the MCP tools: the request schemas. */'
  const line = `declareRequests(${t}, { create: ${names.createRequest}, update: ${names.updateRequest} })`
  if (line.length <= LINE_WIDTH) return `${doc}\n${line}`
  return `${doc}\ndeclareRequests(${t}, {\n  create: ${names.createRequest},\n  update: ${names.updateRequest},\n})`
}

/** The controller's imports: drizzle's operators, Hono, kiln's helpers, the schema and its own modules. */
function controllerImports(f: ControllerFacts): string {
  const { t, names, deletedAt, touched, id, ctx } = f
  const relations = f.template.relations ?? []
  const kiln = [
    'type ApiEnv',
    'type ApiKeyInfo',
    'checkIfMatch',
    'declareRequests',
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
  const tables = [...new Set([t, ...relations.flatMap((relation) => relation.tables)])].sort()
  const drizzle = deletedAt ? 'and, eq, isNull, sql' : 'and, eq, sql'
  return `import { ${drizzle} } from 'drizzle-orm'
import { Hono } from 'hono'
import {
${kiln.map((name) => `  ${name},`).join('\n')}
} from 'kilnjs/api'
${importLine(tables, ctx.schemaImport)}
${importLine([names.createRequest, names.updateRequest], `../requests/${names.singularFile}.js`)}
${importLine([names.toResource], `../resources/${names.singularFile}.js`)}
import type { ApiContext } from '../routes.js'`
}

/** The scope guards, the id reader of the bulk routes, and (soft delete) the trash's filter. */
function controllerScopes(f: ControllerFacts): string {
  const { t, names, deletedAt, id } = f
  return `/** Scopes a key needs on these routes (\`*\` passes every check): change them per route here. */
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
}`
}
