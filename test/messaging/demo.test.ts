import { eq } from 'drizzle-orm'
import { afterEach, describe, expect, it } from 'vitest'
import { demoJobHandlers } from '../../examples/demo/src/jobs.ts'
import {
  StoreDeliveryStatus,
  StoreInboundMessage,
} from '../../examples/demo/src/messaging/listeners.ts'
import { messages } from '../../examples/demo/src/schema.ts'
import { ConfigError, type QueueWorker } from '../../src/core/index.ts'
import { Customer, type MessagingStatusUpdate } from '../../src/messaging/index.ts'
import { type DemoUnderTest, signIn, startDemo } from '../demo/support.ts'
import { createPostgresTestDatabase } from '../support/databases.ts'
import { postgresUrl } from '../support/env.ts'
import {
  ACCESS_TOKEN,
  APP_SECRET,
  fixtureBytes,
  OWNER,
  PHONE_NUMBER_ID,
  signatureOf,
  VERIFY_TOKEN,
} from './support.ts'

const messagingEnv = {
  MSG_APP_SECRET: APP_SECRET,
  MSG_ACCESS_TOKEN: ACCESS_TOKEN,
  MSG_PHONE_NUMBER_ID: PHONE_NUMBER_ID,
  MSG_VERIFY_TOKEN: VERIFY_TOKEN,
  MSG_OWNER_PHONES: `+${OWNER}`,
}
const SENT_WAMID = 'wamid.HBgLMTIwMjU1NTAxNDMVAgARGBJGQUtFT1VUQk9VTkQwMDAwMDEA'

let demo: DemoUnderTest | undefined
let worker: QueueWorker | undefined
let dropDatabase: (() => Promise<void>) | undefined
afterEach(async () => {
  await worker?.close()
  worker = undefined
  await demo?.close()
  demo = undefined
  await dropDatabase?.()
  dropDatabase = undefined
})

async function startWithMessaging() {
  demo = await startDemo({ env: messagingEnv })
  worker = demo.ctx.shared.queue.work(demoJobHandlers(demo.ctx), { concurrency: 1 })
  return demo
}

async function deliver(name: string) {
  if (!demo) throw new Error('demo not started')
  const res = await demo.app.request('/messaging/webhook', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': signatureOf(name) },
    body: fixtureBytes(name),
  })
  expect(res.status).toBe(200)
  await demo.ctx.shared.queue.drain()
}

describe('demo: messaging stored and listed', () => {
  it('stores inbound messages with their sender identity and lists them on /messages', async () => {
    const { app, ctx } = await startWithMessaging()
    await deliver('inbound-text-customer.json')
    await deliver('inbound-text-owner.json')
    await deliver('inbound-text-customer.json') // a redelivery
    await deliver('inbound-image-ignored.json')

    const rows = await ctx.database.db.select().from(messages).orderBy(messages.id)
    expect(rows.map((r) => [r.direction, r.phone, r.senderKind, r.body])).toEqual([
      ['inbound', '12025550143', 'Customer', 'Hi, do you have the blue one in stock?'],
      ['inbound', OWNER, 'Owner', 'status'],
    ])
    expect(rows[0]?.sentAt?.toISOString()).toBe('2025-11-21T16:00:00.000Z')

    const jar = await signIn(app, ctx.demoUser.email, ctx.demoUser.password, '/messages')
    const page = await app.request('/messages', { headers: { cookie: jar.header() } })
    expect(page.status).toBe(200)
    const body = await page.text()
    expect(body).toContain('Hi, do you have the blue one in stock?')
    expect(body).toContain('<td>Owner</td>')
    expect(body).toContain('<td>Customer</td>')
    expect(body).toContain('/messaging/webhook')
    expect(page.headers.get('cache-control')).toBe('no-store')
  })

  it('stores what its columns can hold: NUL characters dropped, an over-long phone clipped', async () => {
    const { ctx } = await startWithMessaging()
    await new StoreInboundMessage(ctx.database.db).handle({
      wamid: 'wamid.with-nul',
      sender_identity: Customer('1'.repeat(30)),
      text: 'before\u0000after',
      timestamp: new Date(0),
      raw: {},
    })
    const [row] = await ctx.database.db
      .select()
      .from(messages)
      .where(eq(messages.wamid, 'wamid.with-nul'))
    expect(row?.body).toBe('beforeafter')
    expect(row?.phone).toBe('1'.repeat(20))
  })

  it('a user who withholds the phone number: stored without one, no failed job', async () => {
    const { ctx } = await startWithMessaging()
    await deliver('inbound-text-bsuid-only.json')
    await deliver('status-failed-bsuid.json')
    const rows = await ctx.database.db.select().from(messages).orderBy(messages.id)
    expect(rows.map((r) => [r.direction, r.phone, r.senderKind, r.body ?? r.status])).toEqual([
      ['inbound', null, 'Customer', 'Can I pick it up today?'],
      ['outbound', null, null, 'Failed'],
    ])
    expect(await ctx.shared.queue.failed(10)).toEqual([])
  })

  it('a status never moves backwards: read stays read when a late delivered arrives', async () => {
    const { ctx } = await startWithMessaging()
    await deliver('status-sent.json')
    await deliver('status-read.json')
    await deliver('status-delivered.json')
    await deliver('status-sent.json')
    await deliver('status-failed.json')
    const rows = await ctx.database.db.select().from(messages).orderBy(messages.id)
    expect(rows.map((r) => [r.wamid, r.direction, r.status, r.errorCode])).toEqual([
      [SENT_WAMID, 'outbound', 'Read', null],
      ['wamid.HBgLMTIwMjU1NTAxNzcVAgARGBJGQUtFT1VUQk9VTkQwMDAwMDIA', 'outbound', 'Failed', 131047],
    ])
    expect(rows[0]?.statusAt?.toISOString()).toBe(new Date(1763741100 * 1000).toISOString())
  })

  it.skipIf(!postgresUrl)(
    'concurrent out-of-order statuses of one message end on the furthest one (PostgreSQL)',
    async () => {
      const database = await createPostgresTestDatabase()
      dropDatabase = database.drop
      demo = await startDemo({ env: messagingEnv, databaseUrl: database.url })
      const { ctx } = demo
      const listener = new StoreDeliveryStatus(ctx.database.db)
      const status = (
        s: MessagingStatusUpdate['status'],
        seconds: number,
      ): MessagingStatusUpdate => ({
        wamid: 'wamid.concurrent',
        status: s,
        timestamp: new Date(seconds * 1000),
        recipient: '12025550143',
        errors: [],
      })
      for (let i = 0; i < 5; i++) {
        await Promise.all([
          listener.handle(status('Delivered', 2)),
          listener.handle(status('Read', 3)),
          listener.handle(status('Sent', 1)),
        ])
      }
      const [row] = await ctx.database.db
        .select()
        .from(messages)
        .where(eq(messages.wamid, 'wamid.concurrent'))
      expect(row?.status).toBe('Read')
    },
  )

  it('/messages asks for a sign-in', async () => {
    const { app } = await startWithMessaging()
    const res = await app.request('/messages')
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/login?return_to=%2Fmessages')
  })
})

describe('demo: messaging switched by the environment', () => {
  it('is off without MSG_* variables: no webhook, and the page says how to turn it on', async () => {
    demo = await startDemo()
    const res = await demo.app.request('/messaging/webhook', { method: 'POST', body: '{}' })
    expect(res.status).toBe(404)
    const jar = await signIn(demo.app, demo.ctx.demoUser.email, demo.ctx.demoUser.password)
    const page = await demo.app.request('/messages', { headers: { cookie: jar.header() } })
    expect(await page.text()).toContain('Messaging is off: set MSG_APP_SECRET, MSG_ACCESS_TOKEN')
  })

  it('a partial setup fails start-up naming the missing variables', async () => {
    const error = await startDemo({ env: { MSG_APP_SECRET: APP_SECRET } }).then(
      (started) => {
        demo = started
        return undefined
      },
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).message).toMatch(
      /MSG_ACCESS_TOKEN: is required[\s\S]*MSG_PHONE_NUMBER_ID: is required[\s\S]*MSG_VERIFY_TOKEN: is required/,
    )
    expect((error as ConfigError).message).not.toContain(APP_SECRET)
  })
})
