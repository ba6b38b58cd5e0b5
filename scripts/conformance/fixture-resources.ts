/**
 * The conformance suite's fixture resources and the one prompt its completion scenario names,
 * registered on the demo's `/mcp` for the conformance run only, through kiln's public API for
 * an app's own MCP features (`createMcpServer({ register })`), beside kiln's model resources
 * (`kiln://models/...`). kiln itself serves no `test://` resource and no prompt: the suite
 * names them (`test://static-text`, `test://static-binary`, `test://template/{id}/data`, the
 * prompt `test_prompt_with_arguments`), and with them its resources and completion scenarios
 * exercise kiln's endpoint (both eras, stateless, bearer auth) with an app's resources and
 * completions mixed with kiln's.
 */
import { completable, type McpServer, ResourceTemplate } from '@modelcontextprotocol/server'
import { z } from 'zod'

/** A 1×1 PNG: the suite checks that the blob is there and typed. */
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=='

export function registerFixtureResources(server: McpServer): void {
  server.registerResource(
    'static-text',
    'test://static-text',
    { description: 'A static text resource', mimeType: 'text/plain' },
    (uri) => ({
      contents: [
        {
          uri: uri.href,
          mimeType: 'text/plain',
          text: 'This is the content of the static text resource.',
        },
      ],
    }),
  )
  server.registerResource(
    'static-binary',
    'test://static-binary',
    { description: 'A static binary resource (a PNG)', mimeType: 'image/png' },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: 'image/png', blob: PNG }] }),
  )
  server.registerResource(
    'template',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { description: 'Data for an id', mimeType: 'application/json' },
    (uri, { id }) => ({
      contents: [
        {
          uri: uri.href,
          mimeType: 'application/json',
          text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
        },
      ],
    }),
  )
  // Like kiln's tools and resources, the prompt list never changes while the server serves
  // (the SDK would declare `listChanged: true` otherwise).
  server.server.registerCapabilities({ prompts: { listChanged: false } })
  server.registerPrompt(
    'test_prompt_with_arguments',
    {
      description: 'A prompt with two arguments; arg1 completes',
      argsSchema: z.object({
        arg1: completable(z.string().describe('First test argument'), (value) =>
          ['test', 'testing', 'tested'].filter((word) => word.startsWith(value)),
        ),
        arg2: z.string().describe('Second test argument'),
      }),
    },
    ({ arg1, arg2 }) => ({
      messages: [
        {
          role: 'user',
          content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` },
        },
      ],
    }),
  )
}
