/**
 * The conformance suite's fixture tools, registered on the demo's `/mcp` for the conformance run
 * only, through kiln's public API for an app's own tools (`createMcpServer({ register })`). The
 * suite names them and describes what each returns; with them its `tools-call-*` scenarios
 * exercise kiln's MCP layer (both eras, the stateless endpoint, bearer auth) for text, image,
 * audio and embedded-resource content, tool errors, progress and log notifications, a
 * JSON Schema 2020-12 input schema and a parameter mirrored in a header.
 */
import { fromJsonSchema, type McpServer, type ServerContext } from '@modelcontextprotocol/server'

/** A 1×1 PNG and a WAV file without samples: the suite checks type, data and MIME type. */
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=='
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA='

/** The suite's SEP-1613/SEP-2106 schema, which tools/list must give back keyword for keyword. */
const JSON_SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else, not a promise
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
} as const

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] })

export function registerFixtureTools(server: McpServer): void {
  server.registerTool('test_simple_text', { description: 'Returns simple text' }, () =>
    text('This is a simple text response for testing.'),
  )
  server.registerTool('test_image_content', { description: 'Returns an image' }, () => ({
    content: [{ type: 'image', data: PNG, mimeType: 'image/png' }],
  }))
  server.registerTool('test_audio_content', { description: 'Returns audio' }, () => ({
    content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }],
  }))
  server.registerTool(
    'test_embedded_resource',
    { description: 'Returns an embedded resource' },
    () => ({
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'test://embedded-resource',
            mimeType: 'text/plain',
            text: 'This is an embedded resource content.',
          },
        },
      ],
    }),
  )
  server.registerTool(
    'test_multiple_content_types',
    { description: 'Returns text, an image and a resource' },
    () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: PNG, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ],
    }),
  )
  server.registerTool('test_error_handling', { description: 'Always fails' }, () => {
    throw new Error('This tool intentionally returns an error for testing')
  })
  server.registerTool(
    'test_tool_with_progress',
    { description: 'Reports progress 0, 50, 100 of 100' },
    async (ctx: ServerContext) => {
      const progressToken = ctx.mcpReq._meta?.progressToken
      for (const progress of [0, 50, 100]) {
        if (progressToken !== undefined) {
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken, progress, total: 100 },
          })
        }
        if (progress < 100) await pause(50)
      }
      return text(String(progressToken ?? 'no progress token'))
    },
  )
  const logThree = async (ctx: ServerContext) => {
    await ctx.mcpReq.log('info', 'Tool execution started')
    await pause(50)
    await ctx.mcpReq.log('info', 'Tool processing data')
    await pause(50)
    await ctx.mcpReq.log('info', 'Tool execution completed')
  }
  server.registerTool(
    'test_tool_with_logging',
    { description: 'Sends three log messages' },
    async (ctx: ServerContext) => {
      await logThree(ctx)
      return text('Tool with logging executed successfully')
    },
  )
  // 2026-07-28: logs only when the request's `_meta` names a log level (the SDK's rule).
  server.registerTool(
    'test_logging_tool',
    { description: 'Logs when the request asks for a log level' },
    async (ctx: ServerContext) => {
      await ctx.mcpReq.log('info', 'Diagnostic trace logging activated')
      return text('Logging evaluated')
    },
  )
  server.registerTool(
    'json_schema_2020_12_tool',
    {
      description: 'Takes a JSON Schema 2020-12 input schema',
      inputSchema: fromJsonSchema<Record<string, unknown>>(
        JSON_SCHEMA_2020_12 as unknown as Parameters<typeof fromJsonSchema>[0],
      ),
    },
    (args) => text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`),
  )
  // SEP-2243: a parameter mirrored in an `Mcp-Param-Region` header, which the SDK checks
  // against the body on every 2026-07-28 call.
  server.registerTool(
    'test_custom_header',
    {
      description: 'Takes a region that the client also sends as a header',
      inputSchema: fromJsonSchema<{ region: string }>({
        type: 'object',
        properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
        required: ['region'],
      } as unknown as Parameters<typeof fromJsonSchema>[0]),
    },
    ({ region }) => text(`region ${region}`),
  )
}
