import { afterEach, describe, expect, it } from 'vitest'
import { ValidationError } from '../../src/core/index.ts'
import {
  createMessagingClient,
  MessagingApiError,
  Template,
  Text,
  textParameter,
} from '../../src/messaging/index.ts'
import { buildSendRequest } from '../../src/messaging/message.ts'
import {
  CUSTOMER,
  CUSTOMER_BSUID,
  CUSTOMER_PARENT_BSUID,
  fixtureBytes,
  type StandInReply,
  startGraphStandIn,
  testConfig,
} from './support.ts'

describe('send() to a BSUID against the stand-in Graph API', () => {
  let close: (() => Promise<void>) | undefined
  afterEach(async () => {
    await close?.()
    close = undefined
  })

  async function setup(
    reply: StandInReply = {
      status: 200,
      body: fixtureBytes('graph-api/send-bsuid-success-response.json'),
    },
  ) {
    const standIn = await startGraphStandIn([reply])
    close = standIn.close
    const client = createMessagingClient({
      config: testConfig(standIn.url),
      retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 1 },
      sleep: async () => {},
    })
    return { client, requests: standIn.requests, url: standIn.url }
  }

  it('a Text goes in the `recipient` field, not `to`', async () => {
    const { client, requests } = await setup()
    const result = await client.send(CUSTOMER_BSUID, Text('Your order #1042 is ready for pickup.'))
    expect(result).toEqual({
      wamid: 'wamid.HBgXVVMuMTM0OTEyMDg2NTUzMDI3NDE5MTgVAgARGBJGQUtFT1VUQk9VTkQwMDAwMDMA',
    })
    expect(requests).toHaveLength(1)
    expect(requests[0]?.body.toString('utf8')).toBe(
      fixtureBytes('graph-api/send-text-bsuid-request.json').toString('utf8'),
    )
  })

  it('a Template to a BSUID too', async () => {
    const { client, requests } = await setup()
    await client.send(
      CUSTOMER_BSUID,
      Template('order_ready', 'en_US', [textParameter('Ana'), textParameter('1042')]),
    )
    expect(requests[0]?.body.toString('utf8')).toBe(
      fixtureBytes('graph-api/send-template-bsuid-request.json').toString('utf8'),
    )
  })

  it('a parent BSUID is a recipient as well; a phone number stays in `to`', () => {
    expect(buildSendRequest(CUSTOMER_PARENT_BSUID, Text('hi'))).toMatchObject({
      recipient: CUSTOMER_PARENT_BSUID,
    })
    const toPhone = buildSendRequest(CUSTOMER, Text('hi'))
    expect(toPhone).toMatchObject({ to: CUSTOMER })
    expect(toPhone).not.toHaveProperty('recipient')
  })

  it('neither a phone number nor a BSUID: a ValidationError and no request', async () => {
    const { client, requests } = await setup()
    for (const bad of ['us.13491208655302741918', 'US.', '@ana.customer', '']) {
      await expect(client.send(bad, Text('hi'))).rejects.toBeInstanceOf(ValidationError)
    }
    expect(requests).toEqual([])
  })

  it('131062 (this message cannot go to a BSUID) is not retried', async () => {
    const { client, requests } = await setup({
      status: 400,
      body: fixtureBytes('graph-api/error-131062-bsuid-unsupported.json'),
    })
    const error = await client.send(CUSTOMER_BSUID, Template('login_code', 'en_US')).catch((e) => e)
    expect(error).toBeInstanceOf(MessagingApiError)
    expect((error as MessagingApiError).providerCode).toBe(131062)
    expect(requests).toHaveLength(1)
  })

  it('the stand-in refuses what the provider refuses: a BSUID in `to`, no recipient, both', async () => {
    const { url, requests } = await setup()
    const post = (body: object) =>
      fetch(`${url}/v23.0/100000000000001/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ messaging_product: 'whatsapp', type: 'text', ...body }),
      })
    for (const body of [
      { to: CUSTOMER_BSUID },
      { recipient: CUSTOMER },
      {},
      { to: CUSTOMER, recipient: CUSTOMER_BSUID },
    ]) {
      const res = await post(body)
      expect(res.status).toBe(400)
      expect(((await res.json()) as { error: { code: number } }).error.code).toBe(100)
    }
    expect(requests).toHaveLength(4)
  })
})
