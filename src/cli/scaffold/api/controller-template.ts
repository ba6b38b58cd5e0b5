import { importLine } from './format.ts'
import { resourceBlock } from './list-query.ts'
import type { ModelTemplateInput, TemplateContext } from './template-input.ts'

/**
 * A controller's handlers, in the order they stand: route, path, operation, status (`raw`: the
 * operation answers its own Response, the event stream).
 */
const HANDLERS = [
  ['get', "'/'", 'index'],
  ['get', "'/aggregate'", 'aggregate'],
  ['get', "'/events'", 'events', 'raw'],
  ['post', "'/'", 'store', ', 201'],
  ['get', "'/:id'", 'show'],
  ['on', "['PUT', 'PATCH'], '/:id'", 'update'],
  ['delete', "'/:id'", 'destroy'],
  ['patch', "'/'", 'updateMany'],
  ['delete', "'/'", 'destroyMany'],
] as const

/**
 * `controllers/<resource>.ts`: the resource's definition (`defineResource`), then its named
 * handlers (index, aggregate, store, show, update, destroy, the bulk updateMany and destroyMany,
 * and with soft delete restore; events, the change stream), each a call to the operation kiln
 * implements once. What the
 * app changes is its own: a handler replaced by its code, the definition's lists.
 */
export function controllerTemplate(template: ModelTemplateInput, ctx: TemplateContext): string {
  const { names, model, passwordColumn } = template
  const softDelete = model.columns.some((c) => c.name === 'deleted_at' || c.key === 'deletedAt')
  const handlers = [
    ...HANDLERS,
    ...(softDelete ? ([['post', "'/:id/restore'", 'restore']] as const) : []),
  ].map(([method, path, operation, status = '']) =>
    [
      `    .${method}(${path}, kiln.scope.${operation}, async function ${operation}(c) {`,
      status === 'raw'
        ? `      return kiln.${operation}(resourceCall(c))`
        : `      return c.json(await kiln.${operation}(resourceCall(c))${status})`,
      '    })',
    ].join('\n'),
  )
  const deps = ['db', 'counts', 'realtime', ...(passwordColumn ? ['hashPassword'] : [])].join(', ')
  return `import { Hono } from 'hono'
import { type ApiEnv, defineResource, resourceCall, resourceOperations } from 'kilnjs/api'
${importLine([names.table], ctx.schemaImport)}
${importLine([names.createRequest, names.updateRequest], `../requests/${names.singularFile}.js`)}
${importLine([names.toResource], `../resources/${names.singularFile}.js`)}
import type { ApiContext } from '../routes.js'

/**
 * \`/api/v1/${names.resource}\`, declared once for every surface: REST, OpenAPI, the MCP tools
 * and \`include=\` from other resources. \`fields\`: what records show (a column left out here is
 * left out of what \`resource\` returns too); \`filter\`, \`sort\`, \`search\`: what lists take;
 * \`requests\`: what writes take; \`scopes\`: what reads (index, show, aggregate) and writes need,
 * \`*\` passing every check (an operation's own, \`destroy: '…'\`, goes beside them). \`include=\`
 * takes the relations the schema's foreign keys give to the other resources.${
   softDelete
     ? `
 * Soft delete: DELETE sets \`deleted_at\`, and lists, show and aggregates leave such records out;
 * keys that may write list them with \`filter[trashed]=with\` or \`only\`.`
     : ''
 }
 */
${resourceBlock(template)}

/**
 * The handlers of \`/api/v1/${names.resource}\`: each calls kiln's operation, which reads every
 * declaration above (fields, row filter, If-Match…). Replace any with your own code.
 */
export function ${names.controller}({ ${deps} }: ApiContext) {
${operationsLine(template)}
  return new Hono<ApiEnv>()
${handlers.join('\n')}
}
`
}

/** `const kiln = resourceOperations(…)`, with the password hashing of a model that has one. */
function operationsLine({ names, passwordColumn }: ModelTemplateInput): string {
  const head = `  const kiln = resourceOperations(${names.definition}, {`
  if (!passwordColumn) return `${head} db, counts, realtime })`
  const hash = passwordColumn.key
  return `${head}
    db,
    counts,
    realtime,
    // The password a request gives is stored as its hash, by the login's own hasher.
    prepare: async ({ password, ...input }) => ({
      ...input,
      ${hash}: password === undefined ? undefined : await hashPassword(password),
    }),
  })`
}
