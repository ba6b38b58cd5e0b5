import { type CallToolResult, McpServer } from '@modelcontextprotocol/server'

/** Answers a call to a tool the server does not list, from the call's arguments. */
export type UnlistedCallAnswer = (args: Record<string, unknown>) => Promise<CallToolResult>

const SEAL_TOOL = 'kiln_seal_placeholder'
const answers = new WeakMap<McpServer, Map<string, UnlistedCallAnswer>>()

/**
 * An `McpServer` that can answer calls to tools it does not list (a tool the person's grant
 * leaves out answers "Not granted", as docs/mcp/access-policy.md says, not the protocol's "Tool … not
 * found"). The SDK has no public way to answer a call to an unregistered tool, nor to hide a
 * registered one from `tools/list` while still running it: the server's own `tools/call`
 * handler is wrapped as the SDK installs it, through the public `setRequestHandler`. This is
 * the one place that does it; `test/mcp/data/grant.test.ts` fails if the SDK stops installing its
 * handler this way.
 */
export function createAnsweringServer(
  info: { name: string; version: string },
  capabilities: { logging?: Record<string, never> },
): { server: McpServer; seal(): void } {
  // Without `tools` here the SDK installs its tool handlers on the first `registerTool`,
  // after the wrapper below is in place.
  const server = new McpServer(info, { capabilities })
  const table = new Map<string, UnlistedCallAnswer>()
  answers.set(server, table)
  const low = server.server
  const install = low.setRequestHandler.bind(low) as (method: string, handler: unknown) => void
  const answering =
    (otherwise: (request: CallRequest, ctx: unknown) => Promise<unknown>) =>
    (request: CallRequest, ctx: unknown) => {
      const answer = table.get(request.params.name)
      return answer ? answer(request.params.arguments ?? {}) : otherwise(request, ctx)
    }
  let installed = false
  const wrapped = (method: string, handler: unknown) => {
    if (method !== 'tools/call') return install(method, handler)
    installed = true
    return install(method, answering(handler as never))
  }
  Object.assign(low, { setRequestHandler: wrapped })
  low.registerCapabilities({ tools: { listChanged: false } })
  return {
    server,
    seal() {
      if (installed) return
      // No tool was registered: one is registered and removed (the SDK's public API) so its
      // tool handlers are in place, through the wrapper, and an app may still add tools.
      server
        .registerTool(SEAL_TOOL, { description: 'placeholder' }, () => ({ content: [] }))
        .remove()
    },
  }
}

interface CallRequest {
  params: { name: string; arguments?: Record<string, unknown> | undefined }
}

/**
 * Answers calls to `name` on `server` without listing it, when the server was built by
 * `createAnsweringServer` (`createMcpServer`). On another server the call keeps the SDK's
 * "Tool … not found".
 */
export function answerUnlistedCall(
  server: McpServer,
  name: string,
  answer: UnlistedCallAnswer,
): void {
  answers.get(server)?.set(name, answer)
}
