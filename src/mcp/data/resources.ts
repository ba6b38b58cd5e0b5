import {
  type McpServer,
  ResourceNotFoundError,
  ResourceTemplate,
  type Variables,
} from '@modelcontextprotocol/server'
import { operatorsOf, type QueryField, valueSchema } from '../../api/internal.ts'
import { type ColumnClass, classifyColumn } from '../../db/models/columns.ts'
import type { AccessPolicy, McpCaller } from './access.ts'
import { completeField, completeModel } from './completions.ts'
import type { JsonRecord } from './crud-input.ts'
import { listGrammarOf } from './crud-list.ts'
import type { McpModel } from './models.ts'
import { type ReachableModel, reachableModel, reachableModels, reachableTools } from './reach.ts'

/**
 * The URI scheme of kiln's model resources: `kiln://models/{model}` is a model (its resource
 * name, `kiln://models/posts`), `kiln://models/{model}/fields/{field}` one of its fields,
 * `kiln://models/{model}/records/{id}` one of its records (by its primary key).
 */
export const MODEL_URI_TEMPLATE = 'kiln://models/{model}'
export const FIELD_URI_TEMPLATE = 'kiln://models/{model}/fields/{field}'
export const RECORD_URI_TEMPLATE = 'kiln://models/{model}/records/{id}'
export const SCHEMA_MIME_TYPE = 'application/schema+json'
export const RECORD_MIME_TYPE = 'application/json'

export function modelUri(model: McpModel | string): string {
  return `kiln://models/${encodeURIComponent(typeof model === 'string' ? model : model.resource)}`
}

export function recordUri(model: McpModel | string, id: string | number): string {
  return `${modelUri(model)}/records/${encodeURIComponent(String(id))}`
}

const RESOURCE_URI = /^kiln:\/\/models\/([^/?#]+)(?:\/records\/([^/?#]+))?$/

/** The model (and record id) a model or record resource's URI names, percent-decoded. */
export function parseResourceUri(uri: string): { resource: string; id?: string } | undefined {
  const [, model, id] = RESOURCE_URI.exec(uri) ?? []
  const resource = decoded(model)
  if (resource === undefined) return undefined
  if (id === undefined) return { resource }
  const key = decoded(id)
  return key === undefined ? undefined : { resource, id: key }
}

type JsonSchema = Record<string, unknown>

/** How the model resources describe a model: what `crud_list` shows, filters, sorts and attaches. */
interface ModelDescription {
  schema: JsonSchema
  fields: Map<string, JsonSchema>
}

/**
 * The model as the caller reaches it, as a JSON Schema (2020-12) of the records `crud_list`
 * returns: readable fields only (credentials never), each with its type, `readOnly` when the
 * caller can write it with no tool, and the relations `include` attaches as optional
 * properties that point at the related model's resource. `x-kiln` says what the tools allow.
 */
export function describeModel(
  policy: AccessPolicy,
  reach: ReachableModel,
  caller: McpCaller | undefined,
): ModelDescription {
  const { model, access, tools } = reach
  const grammar = listGrammarOf(policy, model, access)
  const readable = new Set(grammar.fields.map((field) => field.name))
  const canList = tools.includes('crud_list')
  const creatable = tools.includes('crud_create')
    ? access.creatable.map((column) => column.name).filter((name) => readable.has(name))
    : []
  const updatable = tools.includes('crud_update')
    ? access.updatable.map((column) => column.name).filter((name) => readable.has(name))
    : []
  const filterable = canList ? new Set(grammar.filterable.map((field) => field.name)) : new Set()
  const sortable = canList ? new Set(grammar.sortable) : new Set<string>()
  const fields = new Map<string, JsonSchema>()
  for (const field of grammar.fields) {
    fields.set(
      field.name,
      fieldSchema(field, {
        writable: creatable.includes(field.name) || updatable.includes(field.name),
        filterable: filterable.has(field.name),
        sortable: sortable.has(field.name),
      }),
    )
  }
  // Relations whose model the caller may list (its grant and tenancy too): include reads them.
  const relations = canList
    ? grammar.relations.filter((relation) =>
        reachableTools(policy, relation.model, caller).includes('crud_list'),
      )
    : []
  const properties: Record<string, JsonSchema> = Object.fromEntries(fields)
  for (const relation of relations) properties[relation.name] = relationSchema(relation)
  const primaryKey = model.columns.filter((column) => column.primaryKey).map((c) => c.name)
  const schema: JsonSchema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: modelUri(model),
    title: model.name,
    description:
      `A ${model.resource} record as the data tools return it (table ${model.tableName}). ` +
      `Tools: ${tools.join(', ')}. Relations are present only when include names them.`,
    type: 'object',
    properties,
    required: grammar.fields.map((field) => field.name),
    'x-kiln': {
      model: model.name,
      resource: model.resource,
      table: model.tableName,
      primaryKey:
        primaryKey.length === 1 ? primaryKey[0] : primaryKey.length > 1 ? primaryKey : null,
      tools,
      filterable: [...filterable],
      sortable: [...sortable],
      searchable: canList ? grammar.search : [],
      creatable,
      updatable,
      relations: Object.fromEntries(relations.map((relation) => [relation.name, link(relation)])),
      tenantScoped: caller?.tenantId !== undefined && access.tenantColumn !== undefined,
    },
  }
  return { schema, fields }
}

type Relation = ReturnType<typeof listGrammarOf>['relations'][number]

/** A relation as a property of the record: the related record (or records) `include` attaches. */
function relationSchema(relation: Relation): JsonSchema {
  const target = { $ref: modelUri(relation.model) }
  return relation.kind === 'belongs-to'
    ? {
        anyOf: [target, { type: 'null' }],
        description: `The ${relation.model.resource} record whose ${relation.remote} is this record's ${relation.local}; attached with include: ["${relation.name}"]`,
      }
    : {
        type: 'array',
        items: target,
        maxItems: relation.limit,
        description: `${relation.model.resource} records whose ${relation.remote} is this record's ${relation.local} (at most ${relation.limit}); attached with include: ["${relation.name}"]`,
      }
}

/** A relation as `x-kiln` lists it: its kind, the related resource and the columns that join. */
function link(relation: Relation): JsonSchema {
  return {
    kind: relation.kind,
    model: relation.model.resource,
    uri: modelUri(relation.model),
    local: relation.local,
    remote: relation.remote,
    ...(relation.kind === 'has-many' ? { limit: relation.limit } : {}),
  }
}

/** A JSON column, or an array of JSON values: any JSON value, which a JSON Schema leaves open. */
function holdsJson(column: ColumnClass): boolean {
  return column.kind === 'json' || (column.kind === 'array' && column.element?.kind === 'json')
}

/** One field's JSON Schema: its wire type (the REST grammar's), nullability and what the tools allow. */
function fieldSchema(
  field: QueryField,
  allowed: { writable: boolean; filterable: boolean; sortable: boolean },
): JsonSchema {
  const info = field.info
  const schema: JsonSchema =
    field.kind === 'other' && holdsJson(classifyColumn(info)) ? {} : { ...valueSchema(field) }
  if (info.nullable) {
    if (typeof schema.type === 'string') schema.type = [schema.type, 'null']
    if (Array.isArray(schema.enum)) schema.enum = [...schema.enum, null]
  }
  if (info.length !== undefined && schema.type !== undefined && field.kind === 'text') {
    schema.maxLength = info.length
  }
  if (!allowed.writable) schema.readOnly = true
  schema['x-kiln'] = {
    sqlType: info.sqlType,
    ...(info.primaryKey ? { primaryKey: true } : {}),
    ...(info.hasDefault || info.autoIncrement ? { hasDefault: true } : {}),
    filterable: allowed.filterable,
    ...(allowed.filterable ? { operators: operatorsOf(field) } : {}),
    sortable: allowed.sortable,
  }
  return schema
}

/**
 * Registers the model resources for `caller`: `resources/list` lists each model it can reach
 * (`kiln://models/posts`), `resources/read` returns its JSON Schema, and
 * `kiln://models/{model}/fields/{field}` one field's; `completion/complete` completes the
 * templates' variables (model names, then field names of the model in the context). A model
 * or field out of reach reads as not found (-32602), as one that does not exist. The record
 * template is `registerRecordResources`'.
 */
export function registerModelResources(
  server: McpServer,
  policy: AccessPolicy,
  caller: McpCaller | undefined,
  record: RecordRead,
): void {
  if (policy.visibleModels.length === 0) return
  // The list of a server never changes while it serves (the same as its tools).
  server.server.registerCapabilities({ resources: { listChanged: false } })
  const read = (uri: URL, variables: Variables) => {
    const reach = reachableModel(policy, caller, decoded(variables.model))
    if (!reach) throw new ResourceNotFoundError(uri.href)
    const { schema, fields } = describeModel(policy, reach, caller)
    let body: JsonSchema = schema
    if (variables.field !== undefined) {
      const name = decoded(variables.field)
      const field = name === undefined ? undefined : fields.get(name)
      if (!field) throw new ResourceNotFoundError(uri.href)
      body = {
        $schema: schema.$schema,
        $id: uri.href,
        title: `${reach.model.resource}.${name}`,
        ...field,
      }
    }
    return {
      contents: [{ uri: uri.href, mimeType: SCHEMA_MIME_TYPE, text: JSON.stringify(body) }],
    }
  }
  server.registerResource(
    'kiln-model',
    new ResourceTemplate(MODEL_URI_TEMPLATE, {
      list: () => ({
        resources: reachableModels(policy, caller).map(({ model, tools }) => ({
          uri: modelUri(model),
          name: model.resource,
          title: model.name,
          description: `Fields, types and relations of ${model.resource} (JSON Schema); tools: ${tools.join(', ')}`,
          mimeType: SCHEMA_MIME_TYPE,
        })),
      }),
      complete: { model: (value) => completeModel(policy, caller, value) },
    }),
    {
      title: 'A model of the app',
      description:
        'The fields, types and relations of a model the data tools reach, as JSON Schema',
      mimeType: SCHEMA_MIME_TYPE,
    },
    read,
  )
  server.registerResource(
    'kiln-model-field',
    new ResourceTemplate(FIELD_URI_TEMPLATE, {
      list: undefined,
      complete: {
        model: (value) => completeModel(policy, caller, value),
        field: (value, context) => completeField(policy, caller, value, context?.arguments?.model),
      },
    }),
    {
      title: 'A field of a model',
      description:
        'One field of a model: its JSON Schema type, whether it can be written, filtered ' +
        '(with which operators) and sorted on',
      mimeType: SCHEMA_MIME_TYPE,
    },
    read,
  )
  registerRecordResources(server, policy, caller, record)
}

/**
 * How the record resources read one record for a caller: `ModelWatch.record`, the record as
 * `crud_list` would show it (grant, scope, policy, tenancy, row filter, soft delete, readable
 * fields only), or undefined.
 */
export type RecordRead = (
  caller: McpCaller | undefined,
  resource: string,
  id: string,
) => Promise<JsonRecord | undefined>

/**
 * `kiln://models/{model}/records/{id}`: one record as `crud_list` would show it to the caller.
 * Not listed; a record out of the caller's view reads as not found (-32602), as one that does
 * not exist.
 */
function registerRecordResources(
  server: McpServer,
  policy: AccessPolicy,
  caller: McpCaller | undefined,
  record: RecordRead,
): void {
  server.registerResource(
    'kiln-record',
    new ResourceTemplate(RECORD_URI_TEMPLATE, {
      list: undefined,
      complete: { model: (value) => completeModel(policy, caller, value) },
    }),
    {
      title: 'A record of a model',
      description:
        'One record by its primary key, as crud_list shows it; subscribe to hear when it changes',
      mimeType: RECORD_MIME_TYPE,
    },
    async (uri: URL, variables: Variables) => {
      const model = decoded(variables.model)
      const id = decoded(variables.id)
      const found =
        model === undefined || id === undefined ? undefined : await record(caller, model, id)
      if (!found) throw new ResourceNotFoundError(uri.href)
      return {
        contents: [{ uri: uri.href, mimeType: RECORD_MIME_TYPE, text: JSON.stringify(found) }],
      }
    },
  )
}

/** A URI variable, percent-decoded; undefined when absent or not valid percent-encoding. */
function decoded(value: string | string[] | undefined): string | undefined {
  const raw = Array.isArray(value) ? value[0] : value
  if (raw === undefined) return undefined
  try {
    return decodeURIComponent(raw)
  } catch {
    return undefined
  }
}
