import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { InMemoryTransport, type McpServer } from '@modelcontextprotocol/server'
import { sql } from 'drizzle-orm'
import type { Database } from '../../../src/db/index.ts'

/** A 2025-era client (the v1 SDK's) connected to `server` over the in-memory transport pair. */
export async function connectInMemory(server: McpServer): Promise<Client> {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair()
  await server.connect(serverTransport)
  const client = new Client({ name: 'kiln-test', version: '1.0.0' })
  await client.connect(clientTransport)
  return client
}

export interface ToolOutcome {
  isError: boolean
  text: string
  json: unknown
}

/** Calls a tool and returns its text (parsed as JSON when it is). */
/** Any SDK client, of the v1 package or of v2's `@modelcontextprotocol/client`. */
export interface ToolCaller {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>
}

export async function call(
  client: ToolCaller,
  name: string,
  args: Record<string, unknown>,
): Promise<ToolOutcome> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult
  const first = result.content[0]
  const text = first && first.type === 'text' ? first.text : ''
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { isError: result.isError === true, text, json }
}

/** Calls a tool that must succeed and returns its JSON. */
export async function ok<T = Record<string, unknown>>(
  client: ToolCaller,
  name: string,
  args: Record<string, unknown>,
): Promise<T> {
  const outcome = await call(client, name, args)
  if (outcome.isError) throw new Error(`${name} failed: ${outcome.text}`)
  return outcome.json as T
}

/** Every row of the test tables, to show a failed call changed nothing. */
export async function snapshot(database: Database): Promise<unknown> {
  const tables = ['users', 'notes']
  const out: Record<string, unknown> = {}
  for (const table of tables) {
    const query = sql.raw(`SELECT * FROM ${table} ORDER BY id`)
    out[table] =
      database.dialect === 'postgres'
        ? (await database.db.execute(query)).rows
        : database.db.all(query)
  }
  return JSON.parse(JSON.stringify(out))
}

/** A 2025-era `initialize` request as a client without an SDK (curl) sends it. */
export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'curl', version: '1' },
  },
}
