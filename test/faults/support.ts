import { createHmac, randomBytes } from 'node:crypto'
import { drizzle } from 'drizzle-orm/node-postgres'
import type pg from 'pg'
import { generateApiKey } from '../../src/api/index.ts'
import { apiKeysPg } from '../../src/db/index.ts'

export const APP_SECRET = `fault-app-secret-${randomBytes(8).toString('hex')}`

/** The MSG_* variables that switch the demo's messaging on, against no real provider. */
export const messagingEnv: Record<string, string> = {
  MSG_APP_SECRET: APP_SECRET,
  MSG_ACCESS_TOKEN: `fault-access-${randomBytes(8).toString('hex')}`,
  MSG_PHONE_NUMBER_ID: '100000000000001',
  MSG_VERIFY_TOKEN: `fault-verify-${randomBytes(6).toString('hex')}`,
  MSG_GRAPH_API_URL: 'http://127.0.0.1:9',
}

export async function mintKey(pool: pg.Pool): Promise<string> {
  const key = generateApiKey('test')
  await drizzle(pool)
    .insert(apiKeysPg)
    .values({ name: 'faults', prefix: key.prefix, hashedKey: key.hashedKey, scopes: '["*"]' })
  return key.rawKey
}

export function inboundText(wamid: string, text: string): string {
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '200000000000002',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '12025550100', phone_number_id: '100000000000001' },
              contacts: [{ profile: { name: 'Ana' }, wa_id: '12025550143' }],
              messages: [
                {
                  from: '12025550143',
                  id: wamid,
                  timestamp: '1763740800',
                  text: { body: text },
                  type: 'text',
                },
              ],
            },
          },
        ],
      },
    ],
  })
}

export function signedWebhook(body: string): RequestInit {
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-hub-signature-256': `sha256=${createHmac('sha256', APP_SECRET).update(body).digest('hex')}`,
    },
    body,
  }
}

export async function messageRows(pool: pg.Pool, wamid: string): Promise<number> {
  const { rows } = await pool.query('select count(*)::int as n from messages where wamid = $1', [
    wamid,
  ])
  return (rows[0] as { n: number }).n
}
