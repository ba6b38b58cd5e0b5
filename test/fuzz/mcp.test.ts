import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { signIn } from '../demo/support.ts'
import {
  accessTokenFor,
  anyJson,
  describeFuzz,
  describeRequest,
  exchange,
  type FuzzDemo,
  fuzzParameters,
  fuzzTimeout,
  nastyString,
} from './support.ts'

const RUNS = 300
const TOOLS = ['crud_create', 'crud_list', 'crud_update', 'crud_delete'] as const
const WRITES = new Set(['crud_create', 'crud_update', 'crud_delete'])
const MODELS = ['posts', 'comments', 'users', 'messages']
const FIELDS = [
  'id',
  'title',
  'body',
  'published',
  'token_count',
  'author_id',
  'post_id',
  'author_name',
  'email',
  'name',
  'password_hash',
  'remember_token',
  'wamid',
  'direction',
  'phone',
  'status',
  'error_code',
  'sent_at',
  'created_at',
  'updated_at',
  'tenant_id',
]

const value = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.integer({ min: 1, max: 6 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(
    'a'.repeat(300),
    '2025-11-21T16:00:00Z',
    'not-a-date',
    'x@example.com',
    '\u0000',
    '\uD800',
    2147483648,
    9007199254740991,
    1e308,
    -1,
  ),
  nastyString,
  anyJson,
)

const record = fc.dictionary(
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...FIELDS) },
    { weight: 1, arbitrary: nastyString },
  ),
  value,
  { maxKeys: 6 },
)

/** A model and field values it accepts, sometimes with one field replaced by anything. */
const validData = fc
  .record({
    target: fc.constantFrom(
      { model: 'posts', fields: { title: 'T', body: 'B', author_id: 1 } },
      { model: 'comments', fields: { post_id: 1, author_name: 'Ann', body: 'C' } },
      { model: 'users', fields: { name: 'N', password_hash: 'x'.repeat(20) } },
      { model: 'messages', fields: { wamid: 'wamid.mcp', direction: 'inbound' } },
    ),
    unique: fc.uuid(),
    edit: fc.option(fc.tuple(fc.constantFrom(...FIELDS), value), { nil: undefined, freq: 2 }),
  })
  .map(({ target, unique, edit }) => {
    const data: Record<string, unknown> = { ...target.fields }
    if (target.model === 'users') data.email = `${unique}@example.com`
    if (target.model === 'messages') data.wamid = `wamid.${unique}`
    if (edit) data[edit[0]] = edit[1]
    return { model: target.model, data }
  })

/** Arguments each tool expects, close to valid: most calls reach the database. */
const argumentsFor = (name: string): fc.Arbitrary<Record<string, unknown>> => {
  const smallId = fc.integer({ min: 1, max: 6 })
  switch (name) {
    case 'crud_list':
      return fc.record(
        {
          model: fc.constantFrom(...MODELS),
          filters: record,
          page: fc.integer({ min: 1, max: 3 }),
          per_page: fc.integer({ min: 1, max: 200 }),
        },
        { requiredKeys: ['model'] },
      )
    case 'crud_create':
      return validData
    case 'crud_update':
      return fc.tuple(validData, smallId).map(([{ model, data }, id]) => ({ model, id, data }))
    case 'crud_delete':
      return fc.record({ model: fc.constantFrom(...MODELS), id: smallId })
    default:
      return fc.constant({})
  }
}

/** Arguments near each tool's schema, with any part replaced by anything. */
const toolArguments = fc.record(
  {
    model: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...MODELS) },
      {
        weight: 1,
        arbitrary: fc.constantFrom('Post', 'api_keys', 'oauth_clients', 'pg_class', ''),
      },
      { weight: 1, arbitrary: value },
    ),
    data: fc.oneof({ weight: 6, arbitrary: record }, { weight: 1, arbitrary: value }),
    id: fc.oneof(
      { weight: 4, arbitrary: fc.integer({ min: 1, max: 6 }) },
      { weight: 1, arbitrary: fc.constantFrom('1', '0', '-1', '1e3', '9007199254740993', ' 1') },
      { weight: 1, arbitrary: value },
    ),
    filters: fc.oneof(record, value),
    page: fc.oneof(fc.integer({ min: -2, max: 5 }), fc.constant(2 ** 53), value),
    per_page: fc.oneof(fc.integer({ min: -2, max: 500 }), value),
  },
  { requiredKeys: [] },
)

const jsonRpcId = fc.oneof(
  { weight: 12, arbitrary: fc.integer({ min: 1, max: 1_000_000 }) },
  { weight: 1, arbitrary: fc.constantFrom('a', '', null, 1.5, -1) },
  { weight: 1, arbitrary: anyJson },
)

const toolCall = fc
  .oneof(
    { weight: 8, arbitrary: fc.constantFrom<string>(...TOOLS) },
    { weight: 1, arbitrary: fc.constantFrom('crud_drop', 'CRUD_LIST', 'crud_list ', '') },
    { weight: 1, arbitrary: nastyString },
  )
  .chain((name) =>
    fc.record({
      id: jsonRpcId,
      name: fc.constant(name),
      arguments: fc.oneof(
        { weight: 6, arbitrary: argumentsFor(name) },
        { weight: 3, arbitrary: toolArguments },
        { weight: 1, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: anyJson },
      ),
      meta: fc.oneof(
        { weight: 12, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: anyJson },
      ),
    }),
  )
  .map(({ id, name, arguments: args, meta }) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name,
      ...(args === undefined ? {} : { arguments: args }),
      ...(meta === undefined ? {} : { _meta: meta }),
    },
  }))

const otherCall = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant('2.0'), fc.constantFrom('1.0', '', 2)),
    id: jsonRpcId,
    method: fc.oneof(
      fc.constantFrom(
        'initialize',
        'tools/list',
        'ping',
        'resources/list',
        'prompts/get',
        'notifications/initialized',
        'logging/setLevel',
        'completion/complete',
        '__proto__',
      ),
      nastyString,
    ),
    params: anyJson,
  },
  { requiredKeys: ['method'] },
)

const message = fc.oneof({ weight: 8, arbitrary: toolCall }, { weight: 2, arbitrary: otherCall })

const body = fc.oneof(
  { weight: 8, arbitrary: message.map((m) => JSON.stringify(m)) },
  { weight: 1, arbitrary: fc.array(message, { maxLength: 3 }).map((m) => JSON.stringify(m)) },
  { weight: 1, arbitrary: anyJson.map((v) => JSON.stringify(v) ?? '') },
  { weight: 1, arbitrary: fc.constantFrom('', '{', '[]', 'null', '{"jsonrpc":"2.0"}') },
)

interface RpcAnswer {
  id?: unknown
  result?: { isError?: boolean; content?: Array<{ type: string; text?: string }> }
  error?: unknown
}

describeFuzz('fuzz: MCP JSON-RPC at /mcp', (backend) => {
  let demo: FuzzDemo
  let token: string

  beforeAll(async () => {
    demo = await backend.start()
    const jar = await signIn(demo.app, demo.ctx.demoUser.email, demo.ctx.demoUser.password)
    token = await accessTokenFor(demo, jar)
    // Records for the tools to find, update and delete.
    const { db } = demo.ctx.database
    const { posts, comments } = await import('../../examples/demo/src/schema.ts')
    for (let i = 0; i < 3; i++) {
      const [post] = await db
        .insert(posts)
        .values({ title: `P${i}`, body: 'B', authorId: 1 })
        .returning()
      await db.insert(comments).values({ postId: post!.id, authorName: 'Ann', body: 'C' })
    }
  })
  afterAll(async () => {
    await demo?.close()
  })

  it(
    'no 5xx, /health answers, tools never return sensitive fields, and refused calls change no row',
    async () => {
      const request = fc.record({
        body,
        authorization: fc.oneof(
          { weight: 12, arbitrary: fc.constant('valid') },
          {
            weight: 1,
            arbitrary: fc.constantFrom(
              undefined,
              'Bearer',
              'Bearer x.y.z',
              'Basic abc',
              'tampered',
            ),
          },
        ),
        accept: fc.oneof(
          { weight: 8, arbitrary: fc.constant('application/json, text/event-stream') },
          {
            weight: 1,
            arbitrary: fc.constantFrom(undefined, 'application/json', 'text/html', '*/*'),
          },
        ),
        contentType: fc.oneof(
          { weight: 8, arbitrary: fc.constant('application/json') },
          {
            weight: 1,
            arbitrary: fc.constantFrom(
              undefined,
              'text/plain',
              'application/x-www-form-urlencoded',
            ),
          },
        ),
        protocolVersion: fc.option(
          fc.oneof(
            { weight: 6, arbitrary: fc.constantFrom('2025-06-18', '2025-03-26') },
            { weight: 1, arbitrary: fc.constantFrom('1999-01-01', 'x', '') },
          ),
          { nil: undefined },
        ),
        method: fc.oneof(
          { weight: 12, arbitrary: fc.constant('POST') },
          { weight: 1, arbitrary: fc.constantFrom('GET', 'DELETE', 'PUT') },
        ),
      })
      const seen = new Map<string, number>()
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const headers: Record<string, string> = {}
          if (r.authorization === 'valid') headers.authorization = `Bearer ${token}`
          else if (r.authorization === 'tampered')
            headers.authorization = `Bearer ${token.slice(0, -2)}xx`
          else if (r.authorization !== undefined) headers.authorization = r.authorization
          if (r.accept !== undefined) headers.accept = r.accept
          if (r.contentType !== undefined) headers['content-type'] = r.contentType
          if (r.protocolVersion !== undefined) headers['mcp-protocol-version'] = r.protocolVersion
          const init: RequestInit = {
            method: r.method,
            headers,
            ...(r.method === 'GET' ? {} : { body: r.body }),
          }
          const writes = toolWrites(r.body)
          const result = await exchange(
            demo,
            describeRequest(r.method, '/mcp', init),
            () => demo.request('/mcp', init),
            {
              // Refused: an HTTP error, or no write tool call that came back without an error.
              rejected: (answer) => answer.status >= 400 || !succeededWrite(answer.body, writes),
            },
          )
          seen.set(
            outcome(result.status, result.body),
            (seen.get(outcome(result.status, result.body)) ?? 0) + 1,
          )
          if (result.status >= 200 && result.status < 300) {
            expect(result.body).not.toMatch(/password_hash\\*"\s*:\s*\\*"/)
            expect(result.body).not.toMatch(/remember_token\\*"\s*:\s*\\*"/)
          }
          if (r.authorization !== 'valid') expect(result.status).toBeGreaterThanOrEqual(400)
        }),
        fuzzParameters(RUNS),
      )
      console.log(`MCP outcomes [${backend.name}]`, Object.fromEntries(seen))
    },
    fuzzTimeout(RUNS),
  )
})

/** The JSON-RPC ids of write tool calls in a request body. */
function toolWrites(body: string): Set<string> {
  const ids = new Set<string>()
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return ids
  }
  for (const item of Array.isArray(parsed) ? parsed : [parsed]) {
    if (!item || typeof item !== 'object') continue
    const call = item as { method?: unknown; id?: unknown; params?: { name?: unknown } }
    if (call.method === 'tools/call' && WRITES.has(String(call.params?.name))) {
      ids.add(JSON.stringify(call.id))
    }
  }
  return ids
}

/** Whether one of the write calls came back as a result without `isError`. */
function succeededWrite(body: string, writes: Set<string>): boolean {
  if (writes.size === 0) return false
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    // Not JSON: the transport refused before any tool ran.
    return false
  }
  for (const answer of (Array.isArray(parsed) ? parsed : [parsed]) as RpcAnswer[]) {
    if (answer?.result && answer.result.isError !== true && writes.has(JSON.stringify(answer.id))) {
      return true
    }
  }
  return false
}

function outcome(status: number, body: string): string {
  try {
    const parsed = JSON.parse(body) as RpcAnswer | RpcAnswer[]
    const first = Array.isArray(parsed) ? parsed[0] : parsed
    if (first?.error) return `${status} rpc-error`
    if (first?.result?.isError) return `${status} tool-error`
    if (first?.result) return `${status} result`
  } catch {}
  return `${status}`
}
