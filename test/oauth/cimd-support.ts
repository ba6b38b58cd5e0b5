import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export type DocumentRoute = (
  req: IncomingMessage,
  res: ServerResponse,
  origin: string,
) => void | Promise<void>

/**
 * A loopback web server standing in for a client's site: it serves the client's metadata
 * document and its redirect URI, and counts document fetches.
 */
export async function serveClientSite(routes: Record<string, DocumentRoute>) {
  const fetches: Record<string, number> = {}
  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    fetches[path] = (fetches[path] ?? 0) + 1
    const route = routes[path]
    if (!route) {
      res.writeHead(404).end()
      return
    }
    await route(req, res, origin)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    origin,
    fetches,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** A route answering a JSON metadata document for the URL it is served at. */
export function documentRoute(
  fields: (origin: string) => Record<string, unknown>,
  headers: Record<string, string> = { 'cache-control': 'max-age=300' },
): DocumentRoute {
  return (_req, res, origin) => {
    const body = JSON.stringify(fields(origin))
    res.writeHead(200, { 'content-type': 'application/json', ...headers })
    res.end(body)
  }
}
