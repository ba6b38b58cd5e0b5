import type { McpServerFactory } from '@modelcontextprotocol/server'
import { serveStdio as serveSdkStdio } from '@modelcontextprotocol/server/stdio'

/**
 * Serves MCP on standard input and output, for both protocol eras: the client's opening
 * (`server/discover` for 2026-07-28, `initialize` for 2025) picks the era, and one server from
 * `createServer` serves the connection. Runs until the client closes its end (or the process
 * gets SIGINT/SIGTERM), then runs `onClose` once. Standard output carries only the protocol:
 * anything else must be written to standard error.
 * @example
 * ```ts
 * await serveStdio(() => createMcpServer({ dataTools: { tools, caller } }), () => database.close())
 * ```
 */
export async function serveStdio(
  createServer: McpServerFactory,
  onClose: () => Promise<void> = async () => {},
): Promise<void> {
  const handle = serveSdkStdio(createServer, { legacy: 'serve' })
  await new Promise<void>((resolve) => {
    process.stdin.once('end', () => resolve())
    process.stdin.once('close', () => resolve())
    process.once('SIGINT', () => resolve())
    process.once('SIGTERM', () => resolve())
  })
  await handle.close().catch(() => {})
  await onClose()
}
