/**
 * The runtime every generated client carries, written into it as source: the options, the
 * result type, the error class, the one \`fetch\` caller and the list grammar's query string.
 */
export const RUNTIME = `export interface ClientOptions {
  /** The API's origin, e.g. \`https://api.example.com\`. */
  baseUrl: string
  /** Sent as \`Authorization: Bearer <key>\`; a function is asked before each request. */
  apiKey?: string | (() => string | Promise<string>)
  /** Headers sent with every request. */
  headers?: Record<string, string>
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch
}

/**
 * An answer: \`ok\` with the success body, or one of the operation's documented failures, typed
 * by status (\`{ error }\`, and \`errors\` per field for a 422). Narrow on \`ok\`, then \`status\`.
 */
export type ApiResult<T, E extends { status: number; body: unknown }> =
  | { ok: true; status: number; body: T; response: Response }
  | (E & { ok: false; response: Response })

/** A status the operation does not document (a 500, a proxy's 502), or a body that is not JSON. */
export class ApiClientError extends Error {
  readonly status: number
  readonly response: Response
  constructor(message: string, status: number, response: Response) {
    super(message)
    this.name = 'ApiClientError'
    this.status = status
    this.response = response
  }
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

function caller(options: ClientOptions) {
  const base = options.baseUrl.replace(/\\/+$/, '')
  return async <R>(method: Method, path: string, init: { query?: object | undefined; body?: unknown }): Promise<R> => {
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers }
    const key = typeof options.apiKey === 'function' ? await options.apiKey() : options.apiKey
    if (key) headers['authorization'] = \`Bearer \${key}\`
    if (init.body !== undefined) headers['content-type'] = 'application/json'
    const search = init.query ? queryString(init.query) : ''
    const response = await (options.fetch ?? fetch)(\`\${base}\${path}\${search}\`, {
      method,
      headers,
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    })
    const text = await response.text()
    let body: unknown
    try {
      body = text === '' ? null : JSON.parse(text)
    } catch {
      throw new ApiClientError(\`\${method} \${path} answered \${response.status} without JSON\`, response.status, response)
    }
    if (response.ok) return { ok: true, status: response.status, body, response } as R
    if (response.status >= 500) {
      throw new ApiClientError(\`\${method} \${path} answered \${response.status}\`, response.status, response)
    }
    return { ok: false, status: response.status, body, response } as R
  }
}

/**
 * The list grammar on the wire: \`filter[field]=v\` and \`filter[field][op]=v\` (deepObject),
 * lists comma-separated (\`sort=-created_at,id\`), everything else as given.
 */
function queryString(query: object): string {
  const params = new URLSearchParams()
  const scalar = (value: unknown): string => (value instanceof Date ? value.toISOString() : String(value))
  const list = (value: unknown): string => (Array.isArray(value) ? value.map(scalar).join(',') : scalar(value))
  // A list operator's values: a comma inside one is written \\, (the API's escape).
  const escaped = (value: unknown): string =>
    Array.isArray(value) ? value.map((item) => scalar(item).replaceAll(',', '\\\\,')).join(',') : scalar(value)
  const isObject = (value: unknown): value is object =>
    value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date)
  const conditions = (prefix: string, value: object): void => {
    for (const [field, condition] of Object.entries(value)) {
      if (condition === undefined) continue
      if (field === 'or' && Array.isArray(condition)) {
        // The OR group: \`filter[or][n][field]…\`, one n per branch.
        condition.forEach((branch: unknown, n) => {
          if (isObject(branch)) conditions(\`\${prefix}[or][\${n}]\`, branch)
        })
      } else if (isObject(condition)) {
        for (const [op, operand] of Object.entries(condition)) {
          if (operand !== undefined) params.append(\`\${prefix}[\${field}][\${op}]\`, escaped(operand))
        }
      } else params.append(\`\${prefix}[\${field}]\`, list(condition))
    }
  }
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue
    if (isObject(value)) conditions(name, value)
    else params.append(name, list(value))
  }
  const text = params.toString()
  return text ? \`?\${text}\` : ''
}
`
