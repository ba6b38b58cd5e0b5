import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { demoDataTools } from '../../examples/demo/src/features/data-tools.ts'
import { createAuditLog, createDatabase, type Database } from '../../src/db/index.ts'
import { createMcpServer } from '../../src/mcp/index.ts'
import { call, connectInMemory } from '../mcp/support/client.ts'
import { createPostgresTestDatabase } from '../support/databases.ts'
import { postgresUrl } from '../support/env.ts'
import { startDemo } from './support.ts'

describe.skipIf(!postgresUrl)('demo: the audit trail survives a shutdown', () => {
  let url: string
  let drop: () => Promise<void>
  let reader: Database | undefined

  beforeAll(async () => {
    ;({ url, drop } = await createPostgresTestDatabase())
  })
  afterAll(async () => {
    await reader?.close()
    await drop()
  })

  it('writes the calls still buffered when the context closes', async () => {
    const demo = await startDemo({ databaseUrl: url, redisPrefix: 'kiln-test-audit-shutdown' })
    const tools = demoDataTools(demo.ctx)
    const client = await connectInMemory(
      createMcpServer({
        dataTools: { tools, caller: { userId: '1', clientId: 'shutdown-client' } },
      }),
    )
    for (let i = 0; i < 3; i++) {
      expect((await call(client, 'crud_list', { model: 'posts' })).isError).toBe(false)
    }
    await client.close()
    // Closed at once, well before the trail's one-second flush.
    await demo.close()
    reader = await createDatabase(url)
    const entries = await createAuditLog(reader).list({ clientId: 'shutdown-client' })
    expect(entries.map((e) => [e.tool, e.outcome, e.userId])).toEqual([
      ['crud_list', 'ok', '1'],
      ['crud_list', 'ok', '1'],
      ['crud_list', 'ok', '1'],
    ])
  }, 60_000)
})
