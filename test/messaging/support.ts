import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import type { Hono } from 'hono'
import {
  createLogger,
  type Logger,
  Redactor,
  type Redis,
  type RedisConnections,
} from '../../src/core/index.ts'
import { pingRedis } from '../../src/core/redis.ts'
import { MessagingConfig } from '../../src/messaging/index.ts'

const FIXTURES = new URL('../fixtures/whatsapp/', import.meta.url)

/** A fixture's exact bytes: never parsed and re-serialized. */
export function fixtureBytes(name: string): Buffer<ArrayBuffer> {
  // readFileSync gives the file its own ArrayBuffer (never a pooled slice).
  return readFileSync(new URL(name, FIXTURES)) as Buffer<ArrayBuffer>
}

export function fixtureJson<T = unknown>(name: string): T {
  return JSON.parse(fixtureBytes(name).toString('utf8')) as T
}

const signatureFile = fixtureJson<{
  appSecret: string
  header: string
  signatures: Record<string, string>
}>('signatures.json')

export const APP_SECRET = signatureFile.appSecret
export const VERIFY_TOKEN = 'test_verify_token'
export const ACCESS_TOKEN = 'EAAtest-access-token-do-not-use'
export const PHONE_NUMBER_ID = '100000000000001'
export const OWNER = '12025550199'
export const CUSTOMER = '12025550143'
/** The customer's business-scoped user id (BSUID) and parent BSUID in the BSUID fixtures. */
export const CUSTOMER_BSUID = 'US.13491208655302741918'
export const CUSTOMER_PARENT_BSUID = 'US.ENT.11815799212886844830'

/** Every signed webhook fixture with the provider's signature. */
export const signedFixtures = Object.entries(signatureFile.signatures).map(([name, signature]) => ({
  name,
  signature,
}))

export function signatureOf(name: string): string {
  const signature = signatureFile.signatures[name]
  if (!signature) throw new Error(`no signature for ${name}`)
  return signature
}

export function testConfig(graphApiUrl?: string): MessagingConfig {
  return new MessagingConfig({
    appSecret: APP_SECRET,
    accessToken: ACCESS_TOKEN,
    verifyToken: VERIFY_TOKEN,
    phoneNumberId: PHONE_NUMBER_ID,
    graphApiUrl,
  })
}

/** A logger whose lines the test can read, with the test secrets registered for redaction. */
export function capturingLogger(): { logger: Logger; lines: string[]; text(): string } {
  const lines: string[] = []
  const redactor = new Redactor().add(APP_SECRET, ACCESS_TOKEN, VERIFY_TOKEN)
  const logger = createLogger({
    level: 'debug',
    redactor,
    destination: { write: (line: string) => void lines.push(line) },
  })
  return { logger, lines, text: () => lines.join('') }
}

/** Serves a Hono app on 127.0.0.1 on a free port. */
export async function listen(app: Hono): Promise<{ url: string; close(): Promise<void> }> {
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) => {
      resolve({
        url: `http://127.0.0.1:${info.port}`,
        close: () =>
          new Promise<void>((done) => {
            ;(server as Server).closeAllConnections?.()
            server.close(() => done())
          }),
      })
    })
  })
}

export interface RecordedRequest {
  method: string
  path: string
  headers: IncomingMessage['headers']
  body: Buffer
}

export type StandInReply = { status: number; body?: string | Buffer; delayMs?: number }

/**
 * Whom a send request is addressed to, checked as the Graph API does before anything else:
 * `to` holds a phone number, `recipient` a BSUID or parent BSUID, and exactly one of them is
 * set (the provider reads `to` first, so a request with both goes to the number). Written here
 * independently of kiln's own checks. Returns what is wrong, or undefined.
 */
function refusedRecipient(body: Buffer): string | undefined {
  let json: unknown
  try {
    json = JSON.parse(body.toString('utf8'))
  } catch {
    return 'the body is not JSON'
  }
  const { to, recipient } = (json ?? {}) as { to?: unknown; recipient?: unknown }
  if (to !== undefined && recipient !== undefined) return 'both `to` and `recipient` are set'
  if (recipient !== undefined) {
    return typeof recipient === 'string' && /^[A-Z]{2}\.(ENT\.)?[A-Za-z0-9]{1,128}$/.test(recipient)
      ? undefined
      : '`recipient` is not a BSUID'
  }
  if (to === undefined) return 'neither `to` nor `recipient` is set'
  return typeof to === 'string' && /^[1-9][0-9]{6,14}$/.test(to)
    ? undefined
    : '`to` is not a phone number'
}

/** The Graph API's answer to a request it cannot address (code 100, invalid parameter). */
function invalidParameter(details: string): string {
  return JSON.stringify({
    error: {
      message: '(#100) Invalid parameter',
      type: 'OAuthException',
      code: 100,
      error_data: { messaging_product: 'whatsapp', details },
      fbtrace_id: 'AStandInTraceId0000000',
    },
  })
}

/**
 * A stand-in Graph API on 127.0.0.1: records each request, refuses one without a valid `to` or
 * `recipient` (400, code 100, as the provider does), and otherwise answers from `replies` in
 * order (the last one repeats).
 */
export async function startGraphStandIn(replies: StandInReply[]): Promise<{
  url: string
  requests: RecordedRequest[]
  close(): Promise<void>
}> {
  const requests: RecordedRequest[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body })
      const refused = refusedRecipient(body)
      const reply: StandInReply = refused
        ? { status: 400, body: invalidParameter(refused) }
        : (replies[Math.min(requests.length - 1, replies.length - 1)] ?? { status: 500 })
      const answer = () => {
        if (res.destroyed) return
        res.writeHead(reply.status, { 'content-type': 'application/json' })
        res.end(reply.body ?? '')
      }
      if (reply.delayMs) setTimeout(answer, reply.delayMs)
      else answer()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** A request-path Redis connection, once it is ready (such connections fail commands before). */
export async function readyClient(connections: RedisConnections): Promise<Redis> {
  const client = connections.connect()
  await pingRedis(client, connections.url)
  return client
}
