import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface RecordedRequest {
  method: string
  /** Path and query as sent. */
  url: string
  path: string
  query: Record<string, string>
  headers: IncomingHttpHeaders
  body: string
}

export interface Reply {
  status: number
  headers?: Record<string, string>
  body?: string
}

/** A provider API played on 127.0.0.1: records every request and answers what `reply` says. */
export interface StandIn {
  url: string
  requests: RecordedRequest[]
  reply: (request: RecordedRequest, index: number) => Reply
  close(): Promise<void>
}

export async function startStandIn(reply: StandIn['reply']): Promise<StandIn> {
  const standIn: StandIn = { url: '', requests: [], reply, close: async () => {} }
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const parsed = new URL(req.url ?? '/', 'http://stand-in')
    const recorded: RecordedRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      path: parsed.pathname,
      query: Object.fromEntries(parsed.searchParams),
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    }
    const index = standIn.requests.push(recorded) - 1
    const answer = standIn.reply(recorded, index)
    res.writeHead(answer.status, answer.headers)
    res.end(answer.body ?? '')
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  standIn.url = `http://127.0.0.1:${port}`
  standIn.close = () => new Promise<void>((resolve) => server.close(() => resolve()))
  return standIn
}
