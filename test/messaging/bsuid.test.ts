import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type JobHandlers,
  MemoryKeyValueStore,
  MemoryQueue,
  silentLogger,
} from '../../src/core/index.ts'
import { isBsuid } from '../../src/messaging/bsuid.ts'
import { classifySender } from '../../src/messaging/identity.ts'
import {
  Customer,
  createMessagingEventBus,
  createOwnerDirectory,
  MemoryDeduplicationStore,
  type MessagingStatusUpdate,
  type MessagingTextReceived,
  messagingJobHandlers,
  messagingWebhook,
  Owner,
  PROCESS_MESSAGING_WEBHOOK,
  replyAddress,
  staticOwners,
} from '../../src/messaging/index.ts'
import { extractWebhookEvents } from '../../src/messaging/payload.ts'
import {
  CUSTOMER,
  CUSTOMER_BSUID,
  CUSTOMER_PARENT_BSUID,
  fixtureBytes,
  fixtureJson,
  listen,
  OWNER,
  signatureOf,
  testConfig,
} from './support.ts'

/** An owner who is known to the business by BSUID only. */
const OWNER_BSUID = 'US.71958204635182730554'

function eventsOf(name: string, owners: string[] = [OWNER]) {
  return extractWebhookEvents(fixtureJson(name), { isOwner: staticOwners(owners) })
}

function textOf(name: string, owners?: string[]): MessagingTextReceived {
  const [item, ...rest] = eventsOf(name, owners)
  expect(rest).toEqual([])
  if (item?.type !== 'MessagingTextReceived') throw new Error(`${name}: no text event`)
  return item.event
}

type Value = { contacts?: unknown[]; messages: Record<string, unknown>[] }

/** A fixture's payload to edit, and its first change's value. */
function editable(name: string) {
  const payload = fixtureJson<{ entry: [{ changes: [{ value: Value }] }] }>(name)
  return { payload, value: payload.entry[0].changes[0].value }
}

function statusOf(name: string): MessagingStatusUpdate {
  const [item, ...rest] = eventsOf(name)
  expect(rest).toEqual([])
  if (item?.type !== 'MessagingStatusUpdate') throw new Error(`${name}: no status event`)
  return item.event
}

describe('BSUIDs', () => {
  it('are two capital letters, a period, an optional ENT. and up to 128 letters and digits', () => {
    for (const good of [CUSTOMER_BSUID, CUSTOMER_PARENT_BSUID, 'BR.1502576394655843', 'IN.a1B2']) {
      expect(isBsuid(good)).toBe(true)
    }
    for (const bad of [
      CUSTOMER,
      '',
      'us.13491208655302741918',
      'USA.1349',
      'US.',
      'US.1349-1208',
      'US.ENT.',
      ` ${CUSTOMER_BSUID}`,
      `US.${'1'.repeat(129)}`,
    ]) {
      expect(isBsuid(bad)).toBe(false)
    }
  })
})

describe('inbound messages with business-scoped user ids', () => {
  it('phone and BSUID: Customer(phone) as specified, with the BSUID beside it', () => {
    const event = textOf('inbound-text-phone-and-bsuid.json')
    expect(event.sender_identity).toStrictEqual({
      kind: 'Customer',
      phone: CUSTOMER,
      user_id: CUSTOMER_BSUID,
    })
    expect(event).toMatchObject({
      wamid: 'wamid.HBgLMTIwMjU1NTAxNDMVAgASGBRGQUtFQlNVSUQwMDAwMDAwMDAwMDEA',
      text: 'Is the blue one back in stock?',
      phone: CUSTOMER,
      user_id: CUSTOMER_BSUID,
    })
    expect(event).not.toHaveProperty('username')
    expect(event).not.toHaveProperty('parent_user_id')
  })

  it('BSUID only (the phone withheld): a customer known by the BSUID, with the username', () => {
    const event = textOf('inbound-text-bsuid-only.json')
    expect(event.sender_identity).toStrictEqual({ kind: 'Customer', user_id: CUSTOMER_BSUID })
    expect(event.sender_identity.phone).toBeUndefined()
    expect(event).toMatchObject({
      wamid: 'wamid.HBgXVVMuMTM0OTEyMDg2NTUzMDI3NDE5MTgVAgASGBRGQUtFQlNVSUQwMDAwMDAwMDAwMDIA',
      text: 'Can I pick it up today?',
      user_id: CUSTOMER_BSUID,
      username: '@ana.customer',
    })
    expect(event).not.toHaveProperty('phone')
    expect(event.timestamp).toEqual(new Date(1776000060 * 1000))
    expect(replyAddress(event.sender_identity)).toBe(CUSTOMER_BSUID)
  })

  it('username with the phone still shared: phone, BSUID and username', () => {
    const event = textOf('inbound-text-username.json')
    expect(event.sender_identity).toStrictEqual({
      kind: 'Customer',
      phone: CUSTOMER,
      user_id: CUSTOMER_BSUID,
    })
    expect(event).toMatchObject({ phone: CUSTOMER, username: '@ana.customer' })
    expect(replyAddress(event.sender_identity)).toBe(CUSTOMER)
  })

  it('parent BSUID: carried on the event', () => {
    const event = textOf('inbound-text-parent-bsuid.json')
    expect(event.sender_identity).toStrictEqual({ kind: 'Customer', user_id: CUSTOMER_BSUID })
    expect(event).toMatchObject({
      user_id: CUSTOMER_BSUID,
      parent_user_id: CUSTOMER_PARENT_BSUID,
      username: '@ana.customer',
    })
  })

  it('the phone-number fixtures keep their specified shape, with no BSUID field', () => {
    const event = textOf('inbound-text-customer.json')
    expect(event.sender_identity).toStrictEqual({ kind: 'Customer', phone: CUSTOMER })
    expect(event).not.toHaveProperty('user_id')
    expect(textOf('inbound-text-owner.json').sender_identity).toStrictEqual({
      kind: 'Owner',
      phone: OWNER,
    })
  })

  it('reads the BSUID from contacts[] when the message lacks from_user_id', () => {
    const { payload, value } = editable('inbound-text-bsuid-only.json')
    delete value.messages[0]?.from_user_id
    const [item] = extractWebhookEvents(payload, { isOwner: () => false })
    expect(item?.type === 'MessagingTextReceived' && item.event.sender_identity).toStrictEqual({
      kind: 'Customer',
      user_id: CUSTOMER_BSUID,
    })
  })

  it('a message with neither a phone nor a BSUID is logged and skipped, not a crash', () => {
    const { payload, value } = editable('inbound-text-bsuid-only.json')
    delete value.messages[0]?.from_user_id
    value.contacts = [{ profile: { name: 'Nobody' } }]
    expect(extractWebhookEvents(payload, { isOwner: () => false })).toEqual([])
  })

  it('does not take the ids of a contact that names another user', () => {
    const { payload, value } = editable('inbound-text-customer.json')
    value.contacts = [{ wa_id: OWNER, user_id: OWNER_BSUID }]
    const [item] = extractWebhookEvents(payload, { isOwner: staticOwners([OWNER_BSUID]) })
    expect(item?.type === 'MessagingTextReceived' && item.event.sender_identity).toStrictEqual({
      kind: 'Customer',
      phone: CUSTOMER,
    })
  })
})

describe('owners by phone number or BSUID', () => {
  it('a sender known by a BSUID alone is a customer unless that BSUID is listed', () => {
    expect(textOf('inbound-text-bsuid-only.json', [OWNER]).sender_identity.kind).toBe('Customer')
    expect(textOf('inbound-text-bsuid-only.json', [CUSTOMER_BSUID]).sender_identity).toStrictEqual({
      kind: 'Owner',
      user_id: CUSTOMER_BSUID,
    })
  })

  it('a listed phone number, BSUID or parent BSUID makes the sender an owner', () => {
    expect(textOf('inbound-text-phone-and-bsuid.json', [CUSTOMER]).sender_identity).toStrictEqual({
      kind: 'Owner',
      phone: CUSTOMER,
      user_id: CUSTOMER_BSUID,
    })
    expect(textOf('inbound-text-phone-and-bsuid.json', [CUSTOMER_BSUID]).sender_identity.kind).toBe(
      'Owner',
    )
    expect(
      textOf('inbound-text-parent-bsuid.json', [CUSTOMER_PARENT_BSUID]).sender_identity,
    ).toStrictEqual({ kind: 'Owner', user_id: CUSTOMER_BSUID })
  })

  it('classifySender takes a phone number (the spec form) or the ids', () => {
    const isOwner = staticOwners([' +1 202 555 0199', OWNER_BSUID])
    expect(classifySender(OWNER, isOwner)).toStrictEqual(Owner(OWNER))
    expect(classifySender({ user_id: OWNER_BSUID }, isOwner)).toStrictEqual(
      Owner({ user_id: OWNER_BSUID }),
    )
    expect(classifySender({ phone: CUSTOMER, user_id: CUSTOMER_BSUID }, isOwner)).toStrictEqual(
      Customer({ phone: CUSTOMER, user_id: CUSTOMER_BSUID }),
    )
  })

  it('lists keep BSUIDs as written and refuse what is neither', async () => {
    const isOwner = staticOwners([` ${OWNER_BSUID} `, 'us.71958204635182730554', 'call me'])
    expect(isOwner(OWNER_BSUID)).toBe(true)
    expect(isOwner('us.71958204635182730554')).toBe(false)
    const directory = await createOwnerDirectory({
      load: async () => ['+1 202 555 0199', OWNER_BSUID, 'nonsense'],
      refreshMs: 0,
    })
    expect(directory.owners().sort()).toEqual([OWNER, OWNER_BSUID].sort())
    expect(directory.isOwner(OWNER_BSUID)).toBe(true)
    directory.close()
  })
})

describe('statuses for BSUID recipients', () => {
  it('status-delivered-bsuid.json: the recipient BSUID, no phone number', () => {
    expect(statusOf('status-delivered-bsuid.json')).toStrictEqual({
      wamid: 'wamid.HBgXVVMuMTM0OTEyMDg2NTUzMDI3NDE5MTgVAgARGBJGQUtFT1VUQk9VTkQwMDAwMDMA',
      status: 'Delivered',
      timestamp: new Date(1776000240 * 1000),
      recipient: undefined,
      recipient_user_id: CUSTOMER_BSUID,
      errors: [],
    })
  })

  it('status-read-phone-and-bsuid.json: the BSUID from contacts[], the parent from the status', () => {
    expect(statusOf('status-read-phone-and-bsuid.json')).toMatchObject({
      status: 'Read',
      recipient: CUSTOMER,
      recipient_user_id: CUSTOMER_BSUID,
      recipient_parent_user_id: CUSTOMER_PARENT_BSUID,
    })
  })

  it('status-failed-bsuid.json: a failed status without contacts keeps its BSUID and error', () => {
    const event = statusOf('status-failed-bsuid.json')
    expect(event).toMatchObject({
      status: 'Failed',
      recipient: undefined,
      recipient_user_id: CUSTOMER_BSUID,
    })
    expect(event.errors.map((e) => e.code)).toEqual([131047])
  })

  it('the phone-number status fixtures keep their specified shape', () => {
    const event = statusOf('status-failed.json')
    expect(event.recipient).toBe('12025550177')
    expect(event).not.toHaveProperty('recipient_user_id')
  })
})

describe('POST /messaging/webhook with BSUID payloads, through the queue to the listeners', () => {
  const queue = new MemoryQueue({ logger: silentLogger() })
  const texts: MessagingTextReceived[] = []
  const statuses: MessagingStatusUpdate[] = []
  const queued: string[] = []
  let server: { url: string; close(): Promise<void> }

  beforeAll(async () => {
    const bus = createMessagingEventBus({ store: new MemoryKeyValueStore() })
    bus.on('MessagingTextReceived', (event) => void texts.push(event))
    bus.on('MessagingStatusUpdate', (event) => void statuses.push(event))
    const handlers = messagingJobHandlers({ bus, isOwner: staticOwners([OWNER, OWNER_BSUID]) })
    const recording: JobHandlers = {
      [PROCESS_MESSAGING_WEBHOOK]: async (payload, job) => {
        queued.push(payload.payload_json)
        await handlers[PROCESS_MESSAGING_WEBHOOK]?.(payload, job)
      },
    }
    queue.work(recording)
    const app = new Hono()
    app.route(
      '/',
      messagingWebhook({ config: testConfig(), queue, dedup: new MemoryDeduplicationStore() }),
    )
    server = await listen(app)
  })
  afterAll(async () => {
    await server.close()
    await queue.close()
  })

  async function deliver(name: string) {
    const res = await fetch(`${server.url}/messaging/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signatureOf(name) },
      body: fixtureBytes(name),
    })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ received: true })
    await queue.drain()
  }

  it('a message with only a BSUID is acknowledged, queued once, deduplicated and dispatched', async () => {
    const name = 'inbound-text-bsuid-only.json'
    await deliver(name)
    await deliver(name) // the provider delivers again: acknowledged, not queued
    expect(queued).toEqual([fixtureBytes(name).toString('utf8')])
    expect(texts).toHaveLength(1)
    expect(texts[0]).toMatchObject({
      wamid: 'wamid.HBgXVVMuMTM0OTEyMDg2NTUzMDI3NDE5MTgVAgASGBRGQUtFQlNVSUQwMDAwMDAwMDAwMDIA',
      sender_identity: { kind: 'Customer', user_id: CUSTOMER_BSUID },
      user_id: CUSTOMER_BSUID,
      username: '@ana.customer',
      text: 'Can I pick it up today?',
    })
    expect(texts[0]?.raw).toEqual(fixtureJson(name))
  })

  it('statuses for a BSUID recipient reach the status listener, the failed one too', async () => {
    await deliver('status-delivered-bsuid.json')
    await deliver('status-failed-bsuid.json')
    expect(statuses.map((s) => [s.status, s.recipient, s.recipient_user_id])).toEqual([
      ['Delivered', undefined, CUSTOMER_BSUID],
      ['Failed', undefined, CUSTOMER_BSUID],
    ])
  })
})
