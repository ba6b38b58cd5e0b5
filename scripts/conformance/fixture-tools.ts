/**
 * The conformance suite's fixture tools, registered on the demo's `/mcp` for the conformance run
 * only, through kiln's public API for an app's own tools (`createMcpServer({ register })`). The
 * suite names them and describes what each returns; with them its `tools-call-*` scenarios
 * exercise kiln's MCP layer (both eras, the stateless endpoint, bearer auth) for text, image,
 * audio and embedded-resource content, tool errors, progress and log notifications, a
 * JSON Schema 2020-12 input schema and a parameter mirrored in a header; and the elicitation
 * tools, which ask the client through kiln's relay of server→client requests in the 2025 era
 * (an `input_required` result in the 2026-07-28 era).
 */
import {
  type ElicitRequestFormParams,
  fromJsonSchema,
  inputRequired,
  inputResponse,
  type McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server'

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

/** The form the suite's SEP-1034 scenario expects: a default for every primitive type. */
const DEFAULTS_FORM: ElicitRequestFormParams['requestedSchema'] = {
  type: 'object',
  properties: {
    name: { type: 'string', default: 'John Doe' },
    age: { type: 'integer', default: 30 },
    score: { type: 'number', default: 95.5 },
    status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
    verified: { type: 'boolean', default: true },
  },
}

/** The form the suite's SEP-1330 scenario expects: the five kinds of enum. */
const ENUMS_FORM = {
  type: 'object',
  properties: {
    untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
    titledSingle: {
      type: 'string',
      oneOf: [
        { const: 'value1', title: 'First Option' },
        { const: 'value2', title: 'Second Option' },
        { const: 'value3', title: 'Third Option' },
      ],
    },
    legacyEnum: {
      type: 'string',
      enum: ['opt1', 'opt2', 'opt3'],
      enumNames: ['Option One', 'Option Two', 'Option Three'],
    },
    untitledMulti: {
      type: 'array',
      items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
    },
    titledMulti: {
      type: 'array',
      items: {
        anyOf: [
          { const: 'value1', title: 'First Choice' },
          { const: 'value2', title: 'Second Choice' },
          { const: 'value3', title: 'Third Choice' },
        ],
      },
    },
  },
} as unknown as ElicitRequestFormParams['requestedSchema']

/**
 * Asks the client for a form and answers with what the user said: the first round returns the
 * question, the second (the client's answer) the result.
 */
function askForm(
  ctx: ServerContext,
  message: string,
  requestedSchema: ElicitRequestFormParams['requestedSchema'],
  answer: (said: string) => string,
) {
  const said = inputResponse(ctx.mcpReq.inputResponses, 'form')
  if (said.kind === 'missing') {
    return inputRequired({
      inputRequests: { form: inputRequired.elicit({ message, requestedSchema }) },
    })
  }
  const view = said.kind === 'elicit' ? said : { action: said.kind, content: undefined }
  return text(answer(`action=${view.action}, content=${JSON.stringify(view.content ?? {})}`))
}

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
  server.registerTool(
    'test_elicitation',
    {
      description: 'Asks the user for a username and an email address',
      inputSchema: fromJsonSchema<{ message: string }>({
        type: 'object',
        properties: { message: { type: 'string' } },
        required: ['message'],
      } as unknown as Parameters<typeof fromJsonSchema>[0]),
    },
    ({ message }, ctx) =>
      askForm(
        ctx,
        message,
        {
          type: 'object',
          properties: {
            username: { type: 'string', description: "User's response" },
            email: { type: 'string', description: "User's email address" },
          },
          required: ['username', 'email'],
        },
        (said) => `User response: ${said}`,
      ),
  )
  server.registerTool(
    'test_elicitation_sep1034_defaults',
    { description: 'Asks for a form whose fields have defaults' },
    (ctx: ServerContext) =>
      askForm(ctx, 'Please review your details', DEFAULTS_FORM, (said) => {
        return `Elicitation completed: ${said}`
      }),
  )
  server.registerTool(
    'test_elicitation_sep1330_enums',
    { description: 'Asks for a form with every kind of enum' },
    (ctx: ServerContext) =>
      askForm(ctx, 'Please choose', ENUMS_FORM, (said) => `Elicitation completed: ${said}`),
  )
  server.registerTool(
    'test_sampling',
    {
      description: "Asks the client's model to answer a prompt",
      inputSchema: fromJsonSchema<{ prompt: string }>({
        type: 'object',
        properties: { prompt: { type: 'string' } },
        required: ['prompt'],
      } as unknown as Parameters<typeof fromJsonSchema>[0]),
    },
    ({ prompt }, ctx) => {
      const answered = inputResponse(ctx.mcpReq.inputResponses, 'sample')
      if (answered.kind === 'missing') {
        return inputRequired({
          inputRequests: {
            sample: inputRequired.createMessage({
              messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
              maxTokens: 100,
            }),
          },
        })
      }
      const result = (ctx.mcpReq.inputResponses as Record<string, unknown> | undefined)?.sample as
        | { content?: { type?: string; text?: string } }
        | undefined
      const content = result?.content
      return text(
        `LLM response: ${content?.type === 'text' ? content.text : JSON.stringify(content)}`,
      )
    },
  )
}
