/**
 * `crud_list` over the MCP endpoint (Streamable HTTP, stateless, bearer-token auth) against the
 * generated REST API's list endpoint (API-key auth, `api` limiter with its limit raised) for the
 * same page of the demo's `posts`, both served by one Hono app in this process and driven by the
 * same keep-alive HTTP client in alternating rounds. The REST side runs twice: counting the
 * total on every request like `crud_list` does, and with its default cached count.
 * Needs PostgreSQL: KILN_BENCH_DATABASE_URL, else KILN_TEST_DATABASE_URL, else
 * postgres://postgres@127.0.0.1:5432/postgres (a scratch database is created and dropped).
 */
import { Agent, request } from 'node:http'
import { type BenchOptions, type BenchResult, compare } from './lib.ts'
import { ROWS, startMcpListServer } from './servers/mcp-list.ts'

const POOL = 10
const CONCURRENCY = 16
const PER_PAGE = 20

export default async function run({ quick }: BenchOptions): Promise<BenchResult[]> {
  const { port, restKey: rawKey, token, close } = await startMcpListServer({ poolMax: POOL })
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  try {
    const restHeaders = { authorization: `Bearer ${rawKey}` }
    const mcpHeaders = {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    }
    let id = 0
    const crudList = async () => {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { name: 'crud_list', arguments: { model: 'posts', page: 1, per_page: PER_PAGE } },
      })
      const answer = (await send(agent, port, 'POST', '/mcp', mcpHeaders, body)) as {
        result?: { isError?: boolean; structuredContent?: { records: unknown[] } }
      }
      if (answer.result?.isError || answer.result?.structuredContent?.records.length !== PER_PAGE) {
        throw new Error(`crud_list: unexpected answer ${JSON.stringify(answer).slice(0, 200)}`)
      }
    }
    const restList = (prefix: string) => async () => {
      const page = (await send(
        agent,
        port,
        'GET',
        `${prefix}/api/v1/posts?page=1&per_page=${PER_PAGE}`,
        restHeaders,
      )) as {
        data: unknown[]
      }
      if (page.data.length !== PER_PAGE) throw new Error('REST list: unexpected page')
    }
    // Both sides answer before they are timed.
    await crudList()
    await restList('/exact')()
    await restList('')()
    const settings = quick
      ? { rounds: 2, durationMs: 500, concurrency: CONCURRENCY }
      : { rounds: 6, durationMs: 2_000, concurrency: CONCURRENCY }
    const notes = `${ROWS.toLocaleString('en-US')} posts, page 1 of ${PER_PAGE}, ${CONCURRENCY} concurrent keep-alive clients, pool ${POOL}`
    const results: BenchResult[] = []
    results.push({
      name: 'crud_list over Streamable HTTP (POST /mcp)',
      baseline: 'GET /api/v1/posts, total counted per request',
      ...(await compare(crudList, restList('/exact'), settings)),
      notes: `${notes}; both run the page query and count(*) on every call`,
    })
    results.push({
      name: 'crud_list over Streamable HTTP (POST /mcp)',
      baseline: 'GET /api/v1/posts, cached total (default)',
      ...(await compare(crudList, restList(''), settings)),
      notes: `${notes}; the REST side answers the total from its record counter`,
    })
    return results
  } finally {
    agent.destroy()
    await close()
  }
}

function send(
  agent: Agent,
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, agent, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`${method} ${path}: ${res.statusCode}`))
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')))
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}
