import type { McpServer } from '@modelcontextprotocol/server'

/** The SDK's server, which an app's own tools are registered on (`server.registerTool`). */
/** The MCP SDK's server, as `createMcpServer` returns it. */
export type { McpServer }

import type { McpCaller } from './data/access.ts'
import { type DataTools, type DataToolsOptions, registerDataTools } from './data/data-tools.ts'
import { createAnsweringServer } from './unlisted-calls.ts'

/** Options of `createMcpServer`. */
export interface CreateMcpServerOptions {
  /** Server name announced to clients (default `kiln`). */
  name?: string
  version?: string
  /** The data tools over the app's models; left out when not given. */
  data?: DataToolsOptions | undefined
  /** Data tools resolved once with `createDataTools`, registered for `caller`. */
  dataTools?: { tools: DataTools; caller?: McpCaller | undefined } | undefined
  /**
   * The app's own tools, registered after the data tools: each function receives the server
   * and calls the SDK's `server.registerTool(name, config, handler)` (kiln's developer tools
   * and the OpenAPI bridge are registered this way too).
   */
  register?: ReadonlyArray<(server: McpServer) => void> | undefined
  /**
   * Declares the `logging` capability (2025-era `logging/setLevel`; deprecated in 2026-07-28,
   * where a request's `_meta` carries its log level): tools may then send log messages with
   * `ctx.mcpReq.log(level, data)`. Default false.
   */
  logging?: boolean | undefined
}

/**
 * An MCP server with kiln's tools, for one transport or one request of the HTTP entry. It
 * advertises `tools` without `listChanged`: the tool list of a server never changes while it
 * serves, and the stateless endpoint has no `subscriptions/listen` stream to announce it on.
 * @example
 * ```ts
 * const server = createMcpServer({ dataTools: { tools, caller } })
 * ```
 */
export function createMcpServer(options: CreateMcpServerOptions = {}): McpServer {
  const { server, seal } = createAnsweringServer(
    { name: options.name ?? 'kiln', version: options.version ?? '0.1.0' },
    options.logging ? { logging: {} } : {},
  )
  if (options.data) registerDataTools(server, options.data)
  if (options.dataTools) options.dataTools.tools.register(server, options.dataTools.caller)
  for (const register of options.register ?? []) register(server)
  seal()
  return server
}
