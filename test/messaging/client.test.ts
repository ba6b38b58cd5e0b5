import { afterEach, describe, expect, it } from 'vitest'
import { ValidationError } from '../../src/core/index.ts'
import {
  AccessTokenExpiredError,
  createMessagingClient,
  currencyParameter,
  MessagingApiError,
  MessagingError,
  MessagingThrottledError,
  MessagingTimeoutError,
  ReengagementRequiredError,
  Template,
  Text,
  textParameter,
} from '../../src/messaging/index.ts'
import { freePort } from '../support/processes.ts'
import {
  ACCESS_TOKEN,
  CUSTOMER,
  capturingLogger,
  fixtureBytes,
  type StandInReply,
  startGraphStandIn,
  testConfig,
} from './support.ts'

const WAMID = 'wamid.HBgLMTIwMjU1NTAxNDMVAgARGBJGQUtFT1VUQk9VTkQwMDAwMDEA'
const success: StandInReply = {
  status: 200,
  body: fixtureBytes('graph-api/send-success-response.json'),
}
const error = (name: string, status: number): StandInReply => ({
  status,
  body: fixtureBytes(`graph-api/${name}`),
})

let closeStandIn: (() => Promise<void>) | undefined
afterEach(async () => {
  await closeStandIn?.()
  closeStandIn = undefined
})

async function setup(
  replies: StandInReply[],
  options: { attempts?: number; timeoutMs?: number } = {},
) {
  const standIn = await startGraphStandIn(replies)
  closeStandIn = standIn.close
  const delays: number[] = []
  const captured = capturingLogger()
  const client = createMessagingClient({
    config: testConfig(standIn.url),
    timeoutMs: options.timeoutMs ?? 5_000,
    retry: { attempts: options.attempts ?? 3, baseDelayMs: 400, maxDelayMs: 1_000 },
    sleep: async (ms) => void delays.push(ms),
    random: () => 0.5,
    logger: captured.logger,
  })
  return { client, requests: standIn.requests, delays, logs: captured.text }
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (e) {
    return e
  }
  throw new Error('expected a failure')
}

describe('send() against a stand-in Graph API', () => {
  it('sends a Text exactly as the provider documents it and returns the wamid', async () => {
    const { client, requests } = await setup([success])
    const result = await client.send(CUSTOMER, Text('Your order #1042 is ready for pickup.'))
    expect(result).toEqual({ wamid: WAMID })
    expect(requests).toHaveLength(1)
    const [request] = requests
    expect(request?.method).toBe('POST')
    expect(request?.path).toBe('/v23.0/100000000000001/messages')
    expect(request?.headers.authorization).toBe(`Bearer ${ACCESS_TOKEN}`)
    expect(request?.headers['content-type']).toBe('application/json')
    expect(request?.body.toString('utf8')).toBe(
      fixtureBytes('graph-api/send-text-request.json').toString('utf8'),
    )
  })

  it('sends a Template with typed text and currency parameters', async () => {
    const { client, requests } = await setup([
      { status: 200, body: fixtureBytes('graph-api/send-template-success-response.json') },
    ])
    const result = await client.send(
      CUSTOMER,
      Template('order_ready', 'en_US', [
        textParameter('Ana'),
        textParameter('1042'),
        currencyParameter({ fallbackValue: '$100.99', code: 'USD', amount1000: 100990 }),
      ]),
    )
    expect(result).toEqual({ wamid: WAMID })
    expect(requests[0]?.body.toString('utf8')).toBe(
      fixtureBytes('graph-api/send-template-request.json').toString('utf8'),
    )
  })

  it('omits components for a template without parameters', async () => {
    const { client, requests } = await setup([success])
    await client.send(CUSTOMER, Template('hello_world', 'en_US'))
    expect(JSON.parse(requests[0]?.body.toString('utf8') ?? '')).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: CUSTOMER,
      type: 'template',
      template: { name: 'hello_world', language: { code: 'en_US' } },
    })
  })

  it('a 400 error body becomes a MessagingApiError with code, subcode, message and trace id; not retried', async () => {
    const { client, requests } = await setup([error('error-132001-template-missing.json', 400)])
    const e = await failure(client.send(CUSTOMER, Template('order_ready', 'en_US')))
    expect(e).toBeInstanceOf(MessagingApiError)
    expect(e).toMatchObject({
      code: 'messaging_api_error',
      providerCode: 132001,
      providerSubcode: 2494073,
      providerType: 'OAuthException',
      message: '(#132001) Template name does not exist in the translation',
      providerDetails: 'template name (order_ready) does not exist in en_US',
      fbtraceId: 'AFakeTraceId0000000005',
      httpStatus: 400,
    })
    expect(requests).toHaveLength(1)
  })

  it('131047 asks for a template: ReengagementRequiredError, not retried', async () => {
    const { client, requests } = await setup([error('error-131047-reengagement.json', 400)])
    const e = await failure(client.send(CUSTOMER, Text('hello again')))
    expect(e).toBeInstanceOf(ReengagementRequiredError)
    expect(e).toMatchObject({ providerCode: 131047, fbtraceId: 'AFakeTraceId0000000003' })
    expect(requests).toHaveLength(1)
  })

  it('190 is an expired token: AccessTokenExpiredError, not retried, the token never in the error', async () => {
    const { client, requests, logs } = await setup([error('error-190-token-expired.json', 401)])
    const e = await failure(client.send(CUSTOMER, Text('hi')))
    expect(e).toBeInstanceOf(AccessTokenExpiredError)
    expect(e).toMatchObject({ providerCode: 190, providerSubcode: 463, httpStatus: 401 })
    expect(requests).toHaveLength(1)
    const everything = `${JSON.stringify(e)} ${(e as Error).message} ${(e as Error).stack} ${logs()}`
    expect(everything).not.toContain(ACCESS_TOKEN)
  })

  it('429 with 130429, then success: retried with backoff and jitter', async () => {
    const { client, requests, delays, logs } = await setup([
      error('error-130429-throughput.json', 429),
      success,
    ])
    expect(await client.send(CUSTOMER, Text('hi'))).toEqual({ wamid: WAMID })
    expect(requests).toHaveLength(2)
    // random 0.5 → three quarters of the first ceiling (400 ms).
    expect(delays).toEqual([300])
    expect(logs()).toContain('retrying')
    expect(logs()).not.toContain(ACCESS_TOKEN)
  })

  it('131056 is throttling whatever the HTTP status: retried on the code', async () => {
    const { client, requests } = await setup([
      error('error-131056-pair-rate-limit.json', 400),
      success,
    ])
    expect(await client.send(CUSTOMER, Text('hi'))).toEqual({ wamid: WAMID })
    expect(requests).toHaveLength(2)
  })

  it('throttling that persists stops after the bounded attempts: MessagingThrottledError', async () => {
    const { client, requests, delays } = await setup([error('error-130429-throughput.json', 429)], {
      attempts: 4,
    })
    const e = await failure(client.send(CUSTOMER, Text('hi')))
    expect(e).toBeInstanceOf(MessagingThrottledError)
    expect(e).toMatchObject({
      providerCode: 130429,
      providerSubcode: 2494055,
      code: 'messaging_throttled',
    })
    expect(requests).toHaveLength(4)
    // Doubling from 400 ms, capped at 1 s, each between half and all of its ceiling.
    expect(delays).toEqual([300, 600, 750])
  })

  it('5xx without an error body is retried, then succeeds', async () => {
    const { client, requests } = await setup([{ status: 503, body: '<html>busy</html>' }, success])
    expect(await client.send(CUSTOMER, Text('hi'))).toEqual({ wamid: WAMID })
    expect(requests).toHaveLength(2)
  })

  it('5xx every time: a MessagingApiError with the HTTP status after the attempts', async () => {
    const { client, requests } = await setup([{ status: 502 }], { attempts: 2 })
    const e = await failure(client.send(CUSTOMER, Text('hi')))
    expect(e).toBeInstanceOf(MessagingApiError)
    expect(e).toMatchObject({ httpStatus: 502, providerCode: undefined })
    expect(requests).toHaveLength(2)
  })

  it('a timeout fails with MessagingTimeoutError and is not retried (it may have been sent)', async () => {
    const { client, requests } = await setup([{ status: 200, body: '{}', delayMs: 3_000 }], {
      timeoutMs: 100,
    })
    const e = await failure(client.send(CUSTOMER, Text('hi')))
    expect(e).toBeInstanceOf(MessagingTimeoutError)
    expect((e as Error).message).toBe('Graph API did not answer within 100 ms')
    expect(requests).toHaveLength(1)
  })

  it('a 200 without a message id is an error, not a made-up result', async () => {
    const { client } = await setup([{ status: 200, body: '{"messaging_product":"whatsapp"}' }])
    const e = await failure(client.send(CUSTOMER, Text('hi')))
    expect(e).toBeInstanceOf(MessagingError)
    expect((e as Error).message).toBe('Graph API answered 200 without a message id')
  })

  it('an unreachable Graph API is retried, then a MessagingError', async () => {
    const port = await freePort()
    const delays: number[] = []
    const client = createMessagingClient({
      config: testConfig(`http://127.0.0.1:${port}`),
      retry: { attempts: 2 },
      sleep: async (ms) => void delays.push(ms),
    })
    const e = await failure(client.send(CUSTOMER, Text('hi')))
    expect(e).toBeInstanceOf(MessagingError)
    expect((e as Error).message).toBe('Graph API is unreachable')
    expect(String((e as Error).cause)).toContain('ECONNREFUSED')
    expect(delays).toHaveLength(1)
  })

  it('validates the phone number and the message before any request', async () => {
    const { client, requests } = await setup([success])
    for (const phone of ['+12025550143', '2025550143x', '012025550143', '']) {
      const e = await failure(client.send(phone, Text('hi')))
      expect(e).toBeInstanceOf(ValidationError)
      expect((e as ValidationError).errors.phone).toBeDefined()
    }
    const empty = await failure(client.send(CUSTOMER, Text('  ')))
    expect((empty as ValidationError).errors).toEqual({ body: ['expected a non-empty text'] })
    const long = await failure(client.send(CUSTOMER, Text('x'.repeat(4097))))
    expect((long as ValidationError).errors.body).toEqual(['expected at most 4096 characters'])
    const noName = await failure(client.send(CUSTOMER, Template('', '')))
    expect(Object.keys((noName as ValidationError).errors).sort()).toEqual(['language', 'name'])
    expect(requests).toHaveLength(0)
  })
})
