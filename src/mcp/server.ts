import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { type DataToolsOptions, registerDataTools } from './data-tools.ts'

export interface CreateMcpServerOptions {
  /** Server name announced to clients (default `kiln`). */
  name?: string
  version?: string
  /** The data tools over the app's models; left out when not given. */
  data?: DataToolsOptions | undefined
  /** Further tools (developer tools, the OpenAPI bridge) registered after the data tools. */
  register?: ReadonlyArray<(server: McpServer) => void>
}

/** An MCP server with kiln's tools. Connect it to one transport (HTTP, stdio, in memory). */
export function createMcpServer(options: CreateMcpServerOptions = {}): McpServer {
  const server = new McpServer(
    { name: options.name ?? 'kiln', version: options.version ?? '0.1.0' },
    { capabilities: { tools: {} } },
  )
  if (options.data) registerDataTools(server, options.data)
  for (const register of options.register ?? []) register(server)
  return server
}
