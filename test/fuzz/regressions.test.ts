import { inspect } from 'node:util'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { validate } from '../../src/api/index.ts'
import { ValidationError } from '../../src/core/index.ts'
import { createDatabase, migrate } from '../../src/db/index.ts'
import { toDeliveryStatus } from '../../src/messaging/events.ts'
import { extractWebhookEvents } from '../../src/messaging/payload.ts'
import { loadOAuthConfig } from '../../src/oauth/index.ts'
import { createDatabaseClientStore } from '../../src/oauth/store/client-store.ts'

/** Bugs the fuzz suites found, each pinned by the smallest request or call that showed it. */
describe('fuzz regressions', () => {
  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])(
    'an unknown body field named %s is a 422 naming it, not a crash',
    (field) => {
      const schema = z.strictObject({ title: z.string() })
      const body = JSON.parse(`{"title":"x",${JSON.stringify(field)}:{"admin":true}}`)
      let error: unknown
      try {
        validate(schema, body)
      } catch (caught) {
        error = caught
      }
      expect(error).toBeInstanceOf(ValidationError)
      const errors = (error as ValidationError).errors
      expect(Object.hasOwn(errors, field)).toBe(true)
      expect(JSON.parse(JSON.stringify(errors))).toEqual(
        JSON.parse(`{${JSON.stringify(field)}:["is not a known field"]}`),
      )
    },
  )

  it.each(['99999999999999999999', '1e400', 8.7e12])(
    'a webhook timestamp (%s) beyond the dates JavaScript holds is skipped, not an Invalid Date event',
    (timestamp) => {
      const item = {
        from: '12025550143',
        id: 'wamid.t',
        timestamp,
        type: 'text',
        text: { body: 'x' },
      }
      const status = { id: 'wamid.s', status: 'read', timestamp, recipient_id: '12025550143' }
      const payload = {
        entry: [
          { changes: [{ field: 'messages', value: { messages: [item], statuses: [status] } }] },
        ],
      }
      const events = extractWebhookEvents(payload, { isOwner: () => false })
      for (const { event } of events) expect(Number.isNaN(event.timestamp.getTime())).toBe(false)
      expect(events).toEqual([])
    },
  )

  it('a client_id holding a NUL character is an unknown client, not a database error (Postgres)', async () => {
    const database = await createDatabase('pglite:')
    try {
      await migrate(database, { logger: { info() {}, warn() {} } as never })
      const clients = createDatabaseClientStore(database)
      await expect(clients.get('\u0000')).resolves.toBeUndefined()
      await expect(clients.get('abc\u0000def')).resolves.toBeUndefined()
    } finally {
      await database.close()
    }
  }, 120_000)

  it('the OAuth config prints and serializes without MCP_TOKEN_SECRET', () => {
    const secret = 'regression-mcp-token-secret-0123456789abcdef'
    const config = loadOAuthConfig({ MCP_TOKEN_SECRET: secret }, { production: false })
    expect(config.secret.reveal()).toBe(secret)
    expect(inspect(config)).not.toContain(secret)
    expect(JSON.stringify(config)).not.toContain(secret)
    expect(JSON.stringify({ config })).toContain('<redacted>')
  })

  it.each(['__proto__', 'constructor', 'toString', 'valueOf'])(
    'a delivery status named %s is Unknown, not an object the listener cannot store',
    (status) => {
      expect(toDeliveryStatus(status)).toBe('Unknown')
    },
  )
})
