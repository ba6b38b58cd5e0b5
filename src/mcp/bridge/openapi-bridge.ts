import { type CallToolResult, Server, type Tool } from '@modelcontextprotocol/server'
import { redactSecrets, Secret } from '../../core/secret.ts'
import { httpMethodAnnotations } from '../annotations.ts'
import {
  isObject,
  type JsonObject,
  jsonBodySchema,
  refResolver,
  resolveDeep,
  toJsonSchema,
} from './openapi-schema.ts'

/** Where the bridge looks for the API's OpenAPI document, relative to its URL. */
export const DEFAULT_SPEC_PATH = '/api/openapi.json'

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const
type HttpMethod = (typeof METHODS)[number]

interface BridgeParameter {
  name: string
  in: 'path' | 'query'
  required: boolean
}

/** One API operation exposed as a tool. */
export interface BridgeOperation {
  tool: Tool
  method: HttpMethod
  /** The path template, with `{param}` segments. */
  path: string
  parameters: BridgeParameter[]
  hasBody: boolean
  bodyRequired: boolean
}

/** Options of `fetchOpenApiDocument`. */
export interface OpenApiBridgeOptions {
  /** The API's base URL, e.g. `http://localhost:3000`. */
  apiUrl: string
  /** Sent as `Authorization: Bearer <key>`; never logged nor returned. */
  apiKey: Secret | string
  /** Where the OpenAPI document is served. Default `/api/openapi.json`. */
  specPath?: string
  fetch?: typeof globalThis.fetch
  /** Per request. Default 30 s. */
  timeoutMs?: number
}

/** A failure to read the API's document; its message never contains the key. */
export class OpenApiBridgeError extends Error {}

/** Fetches the API's OpenAPI document (with the key, in case the docs are protected). */
export async function fetchOpenApiDocument(options: OpenApiBridgeOptions): Promise<JsonObject> {
  const fetcher = options.fetch ?? globalThis.fetch
  const url = new URL(options.specPath ?? DEFAULT_SPEC_PATH, options.apiUrl)
  let response: Response
  try {
    response = await fetcher(url, {
      headers: { Accept: 'application/json', Authorization: authorization(options) },
      signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
    })
  } catch (error) {
    throw new OpenApiBridgeError(
      `Could not reach ${url.origin}: ${redact(errorMessage(error), options)}`,
    )
  }
  if (!response.ok) throw new OpenApiBridgeError(`${url} answered ${response.status}`)
  let document: unknown
  try {
    document = await response.json()
  } catch {
    throw new OpenApiBridgeError(`${url} did not answer JSON`)
  }
  if (!isObject(document) || typeof document.openapi !== 'string' || !isObject(document.paths)) {
    throw new OpenApiBridgeError(`${url} is not an OpenAPI 3 document`)
  }
  return document
}

/** The path of the API's `GET …/keys/self` (kiln's `currentKeyRoutes`), when it has one. */
export function currentKeyPath(document: JsonObject): string | undefined {
  const paths = isObject(document.paths) ? document.paths : {}
  return Object.keys(paths).find((path) => {
    const item = paths[path]
    return path.endsWith('/keys/self') && isObject(item) && isObject(item.get)
  })
}

/**
 * What the key may do, as the API tells it: the scopes of `GET …/keys/self` (the document
 * says where). Undefined when the API has no such endpoint (not a kiln API, or an older one):
 * then nothing says which operations the key may call. A refused key is an error.
 */
export async function fetchKeyScopes(
  document: JsonObject,
  options: OpenApiBridgeOptions,
): Promise<string[] | undefined> {
  const path = currentKeyPath(document)
  if (path === undefined) return undefined
  const base = options.apiUrl.endsWith('/') ? options.apiUrl : `${options.apiUrl}/`
  const url = new URL(path.replace(/^\//, ''), base)
  let response: Response
  try {
    response = await (options.fetch ?? globalThis.fetch)(url, {
      headers: { Accept: 'application/json', Authorization: authorization(options) },
      signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
    })
  } catch (error) {
    throw new OpenApiBridgeError(
      `Could not reach ${url.origin}: ${redact(errorMessage(error), options)}`,
    )
  }
  if (response.status === 401) throw new OpenApiBridgeError(`${url} refused the API key (401)`)
  if (!response.ok) throw new OpenApiBridgeError(`${url} answered ${response.status}`)
  const body: unknown = await response.json().catch(() => undefined)
  const scopes = isObject(body) && isObject(body.data) ? body.data.scopes : undefined
  if (!Array.isArray(scopes) || !scopes.every((scope) => typeof scope === 'string')) {
    throw new OpenApiBridgeError(`${url} did not answer the key's scopes`)
  }
  return scopes
}

/** Whether a key with `scopes` may call an operation that needs `needed` (`*` passes all). */
function mayCall(scopes: readonly string[], needed: unknown): boolean {
  if (scopes.includes('*') || !Array.isArray(needed)) return true
  return needed.every((scope) => scopes.includes(String(scope)))
}

/** Options of `operationsFromDocument`. */
export interface OperationsOptions {
  /**
   * The key's scopes (`fetchKeyScopes`): only the operations it may call become tools (each
   * operation's scopes are the document's `x-scopes`). Undefined: every operation.
   */
  scopes?: readonly string[] | undefined
}

/**
 * The operation answers a server-sent event stream (a resource's `/events`), not one body: it
 * is no tool, since a tool call answers once and a stream never ends.
 */
function streams(operation: JsonObject, resolve: (value: unknown) => unknown): boolean {
  const responses = resolve(operation.responses)
  const ok = isObject(responses) ? resolve(responses['200']) : undefined
  const content = isObject(ok) && isObject(ok.content) ? ok.content : {}
  return 'text/event-stream' in content
}

/**
 * The tools of an OpenAPI document: one per operation, named from method and path with the
 * `/api` and version segments left out (`GET /api/v1/posts/{id}` → `get_posts_by_id`), and an
 * input schema made of the path and query parameters plus `body` for a JSON request body.
 * With the key's `scopes`, only the operations it may call; event streams are left out.
 */
export function operationsFromDocument(
  document: JsonObject,
  { scopes }: OperationsOptions = {},
): BridgeOperation[] {
  const resolve = refResolver(document)
  const operations: BridgeOperation[] = []
  const names = new Set<string>()
  for (const [path, rawItem] of Object.entries(document.paths as JsonObject)) {
    const item = resolve(rawItem)
    if (!isObject(item)) continue
    const shared = Array.isArray(item.parameters) ? item.parameters : []
    for (const method of METHODS) {
      const operation = resolve(item[method])
      if (!isObject(operation)) continue
      if (scopes && !mayCall(scopes, operation['x-scopes'])) continue
      if (streams(operation, resolve)) continue
      const properties: Record<string, object> = {}
      const required: string[] = []
      const parameters: BridgeParameter[] = []
      const byKey = new Map<string, JsonObject>()
      for (const raw of [
        ...shared,
        ...(Array.isArray(operation.parameters) ? operation.parameters : []),
      ]) {
        const parameter = resolve(raw)
        if (!isObject(parameter) || typeof parameter.name !== 'string') continue
        if (parameter.in !== 'path' && parameter.in !== 'query') continue
        byKey.set(`${parameter.in}:${parameter.name}`, parameter)
      }
      for (const parameter of byKey.values()) {
        const name = parameter.name as string
        const location = parameter.in as 'path' | 'query'
        const isRequired = location === 'path' || parameter.required === true
        const schema = toJsonSchema(resolveDeep(parameter.schema ?? { type: 'string' }, resolve))
        if (typeof parameter.description === 'string' && isObject(schema) && !schema.description) {
          schema.description = parameter.description
        }
        properties[name] = schema
        if (isRequired) required.push(name)
        parameters.push({ name, in: location, required: isRequired })
      }
      const requestBody = resolve(operation.requestBody)
      const bodySchema = isObject(requestBody)
        ? jsonBodySchema(requestBody.content, resolve)
        : undefined
      const bodyRequired = isObject(requestBody) && requestBody.required === true
      if (bodySchema) properties.body = bodySchema
      if (bodySchema && bodyRequired) required.push('body')
      const name = unique(toolName(method, path), names)
      const summary = typeof operation.summary === 'string' ? operation.summary : undefined
      const description = [
        summary,
        `${method.toUpperCase()} ${path}`,
        typeof operation.description === 'string' ? operation.description : undefined,
      ]
        .filter(Boolean)
        .join(' — ')
      operations.push({
        tool: {
          name,
          description,
          // The schemas come from a JSON document, so they are JSON values.
          inputSchema: {
            type: 'object',
            properties: properties as Tool['inputSchema']['properties'],
            ...(required.length > 0 ? { required } : {}),
          },
          annotations: httpMethodAnnotations(method),
        },
        method,
        path,
        parameters,
        hasBody: bodySchema !== undefined,
        bodyRequired,
      })
    }
  }
  return operations
}

/** `get` + `/api/v1/posts/{id}/comments` → `get_posts_by_id_comments`. */
export function toolName(method: string, path: string): string {
  const segments = path.split('/').filter((segment) => segment !== '')
  while (segments.length > 0 && /^(api|v\d+(\.\d+)*)$/i.test(segments[0]!)) segments.shift()
  const words = segments.map((segment) => {
    const parameter = /^\{(.+)\}$/.exec(segment)
    return parameter ? `by_${parameter[1]}` : segment
  })
  const name = [method.toLowerCase(), ...words]
    .join('_')
    .replace(/[^A-Za-z0-9_]+/g, '_')
    .replace(/_+/g, '_')
    .replace(/_$/, '')
    .toLowerCase()
  return name.slice(0, 64)
}

function unique(name: string, taken: Set<string>): string {
  let candidate = name
  for (let n = 2; taken.has(candidate); n++) candidate = `${name.slice(0, 60)}_${n}`
  taken.add(candidate)
  return candidate
}

/**
 * A low-level MCP server (the SDK's `Server`: the tools' input schemas are the API's JSON
 * Schemas, not zod) whose tools are the API's operations: each call sends one request
 * with `Authorization: Bearer <key>` and returns the response body (a tool error for 4xx/5xx).
 */
export function createOpenApiBridgeServer(
  operations: BridgeOperation[],
  options: OpenApiBridgeOptions,
): Server {
  const server = new Server(
    { name: 'kiln-openapi-bridge', version: '0.1.0' },
    { capabilities: { tools: { listChanged: false } } },
  )
  const byName = new Map(operations.map((operation) => [operation.tool.name, operation]))
  server.setRequestHandler('tools/list', async () => ({
    tools: operations.map((operation) => operation.tool),
  }))
  server.setRequestHandler('tools/call', async (request) => {
    const operation = byName.get(request.params.name)
    if (!operation) return toolError(`Unknown tool ${request.params.name}`)
    try {
      return await callOperation(operation, request.params.arguments ?? {}, options)
    } catch (error) {
      return toolError(redact(errorMessage(error), options))
    }
  })
  return server
}

/** Sends one operation's request. Arguments are checked against its parameters first. */
export async function callOperation(
  operation: BridgeOperation,
  args: Record<string, unknown>,
  options: OpenApiBridgeOptions,
): Promise<CallToolResult> {
  const known = new Set([
    ...operation.parameters.map((p) => p.name),
    ...(operation.hasBody ? ['body'] : []),
  ])
  const unknown = Object.keys(args).filter((key) => !known.has(key))
  if (unknown.length > 0) {
    return toolError(
      `Unknown argument(s): ${unknown.join(', ')}. Valid: ${[...known].join(', ') || '(none)'}`,
    )
  }
  const missing = operation.parameters
    .filter((p) => p.required && isAbsent(args[p.name]))
    .map((p) => p.name)
  if (operation.bodyRequired && isAbsent(args.body)) missing.push('body')
  if (missing.length > 0) return toolError(`Missing required argument(s): ${missing.join(', ')}`)

  let path = operation.path
  const query = new URLSearchParams()
  for (const parameter of operation.parameters) {
    const value = args[parameter.name]
    if (isAbsent(value)) continue
    if (parameter.in === 'path') {
      if (typeof value === 'object')
        return toolError(`${parameter.name} must be a string or a number`)
      path = path.replace(`{${parameter.name}}`, encodeURIComponent(String(value)))
    } else {
      for (const item of Array.isArray(value) ? value : [value]) {
        query.append(parameter.name, typeof item === 'object' ? JSON.stringify(item) : String(item))
      }
    }
  }
  const url = new URL(
    path.replace(/^\//, ''),
    options.apiUrl.endsWith('/') ? options.apiUrl : `${options.apiUrl}/`,
  )
  url.search = query.toString()
  const headers: Record<string, string> = {
    Accept: 'application/json',
    Authorization: authorization(options),
  }
  let body: string | undefined
  if (operation.hasBody && !isAbsent(args.body)) {
    headers['Content-Type'] = 'application/json'
    body = JSON.stringify(args.body)
  }
  const response = await (options.fetch ?? globalThis.fetch)(url, {
    method: operation.method.toUpperCase(),
    headers,
    ...(body === undefined ? {} : { body }),
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
  })
  const text = redact(await response.text(), options)
  let pretty = text
  try {
    pretty = JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    // Not JSON: returned as it came.
  }
  if (!response.ok)
    return toolError(
      `${operation.method.toUpperCase()} ${url.pathname} answered ${response.status}: ${pretty}`,
    )
  return {
    content: [{ type: 'text', text: pretty || `${response.status} ${response.statusText}` }],
  }
}

function toolError(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true }
}

function isAbsent(value: unknown): boolean {
  return value === undefined || value === null
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ''
    return `${error.message}${cause}`
  }
  return String(error)
}

function authorization(options: OpenApiBridgeOptions): string {
  return `Bearer ${Secret.from(options.apiKey).reveal()}`
}

/** The API's text without the key (an error may quote the credential it refused). */
function redact(text: string, options: OpenApiBridgeOptions): string {
  return redactSecrets(text, [Secret.from(options.apiKey)])
}
