import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'

/**
 * Serves an MCP server on standard input and output until the client closes its end (or the
 * process gets SIGINT/SIGTERM), then runs `onClose` once. Standard output carries only the
 * protocol: anything else must be written to standard error.
 */
export async function serveStdio(
  server: McpServer | Server,
  onClose: () => Promise<void> = async () => {},
): Promise<void> {
  const transport = new StdioServerTransport()
  let closing: Promise<void> | undefined
  const close = () => {
    closing ??= (async () => {
      await server.close().catch(() => {})
      await onClose()
    })()
    return closing
  }
  await server.connect(transport)
  await new Promise<void>((resolve) => {
    transport.onclose = () => resolve()
    process.stdin.once('end', () => resolve())
    process.stdin.once('close', () => resolve())
    process.once('SIGINT', () => resolve())
    process.once('SIGTERM', () => resolve())
  })
  await close()
}
