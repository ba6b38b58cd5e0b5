import { lookup as dnsLookup } from 'node:dns'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { LookupFunction } from 'node:net'
import { isIP } from 'node:net'
import { isAllowedAddress } from './address-policy.ts'

export interface DocumentFetchLimits {
  /** Largest document accepted, in bytes. */
  maxBytes: number
  /** Time for the whole fetch, redirects included. */
  timeoutMs: number
  /** Let the fetch reach loopback addresses (development and tests only). */
  allowLoopback: boolean
}

export interface FetchedDocument {
  body: string
  cacheControl: string | null
}

/** Why a document could not be fetched; the message is safe to show and log. */
export class DocumentFetchError extends Error {}

const MAX_REDIRECTS = 3

/**
 * Fetches a client metadata document without becoming a proxy into the server's network:
 * every address the name resolves to is checked, and the connection goes to the checked
 * address (no second lookup to rebind); IP literals are checked the same way. Size and time
 * are bounded; redirects are followed only within the same origin.
 */
export async function fetchClientDocument(
  url: URL,
  limits: DocumentFetchLimits,
): Promise<FetchedDocument> {
  const deadline = Date.now() + limits.timeoutMs
  let current = url
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const response = await get(current, limits, deadline)
    if (response.status >= 300 && response.status < 400 && response.location) {
      const next = new URL(response.location, current)
      if (next.origin !== url.origin) {
        throw new DocumentFetchError('the document redirects to another host')
      }
      current = next
      continue
    }
    if (response.status !== 200) {
      throw new DocumentFetchError(`the document answered HTTP ${response.status}`)
    }
    return { body: response.body, cacheControl: response.cacheControl }
  }
  throw new DocumentFetchError('the document redirects too many times')
}

type Answer = { status: number; location?: string; body: string; cacheControl: string | null }

function get(url: URL, limits: DocumentFetchLimits, deadline: number): Promise<Answer> {
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (isIP(host) !== 0 && !isAllowedAddress(host, limits.allowLoopback)) {
    return Promise.reject(new DocumentFetchError('the document host is not a public address'))
  }
  const lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0)
      const list = addresses as unknown as { address: string; family: number }[]
      const refused = list.find((entry) => !isAllowedAddress(entry.address, limits.allowLoopback))
      if (refused || list.length === 0) {
        return callback(new DocumentFetchError('the document host is not a public address'), '', 0)
      }
      const first = list[0]!
      if ((options as { all?: boolean }).all) {
        return (callback as unknown as (e: null, a: typeof list) => void)(null, [first])
      }
      callback(null, first.address, first.family)
    })
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise<Answer>((resolve, reject) => {
    const remaining = deadline - Date.now()
    if (remaining <= 0) return reject(new DocumentFetchError('the document took too long'))
    const req = send(
      url,
      {
        method: 'GET',
        lookup,
        headers: { accept: 'application/json', 'user-agent': 'kiln-oauth' },
        timeout: remaining,
      },
      (res) => collect(res, limits.maxBytes).then(resolve, reject),
    )
    const timer = setTimeout(() => {
      req.destroy(new DocumentFetchError('the document took too long'))
    }, remaining)
    req.on('close', () => clearTimeout(timer))
    req.on('timeout', () => req.destroy(new DocumentFetchError('the document took too long')))
    req.on('error', (error) =>
      reject(
        error instanceof DocumentFetchError
          ? error
          : new DocumentFetchError(`the document could not be fetched (${errorCode(error)})`),
      ),
    )
    req.end()
  })
}

function collect(res: IncomingMessage, maxBytes: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const status = res.statusCode ?? 0
    const location = res.headers.location
    const cacheControl = res.headers['cache-control'] ?? null
    if (status !== 200) {
      res.resume()
      return resolve({ status, ...(location ? { location } : {}), body: '', cacheControl })
    }
    const declared = Number(res.headers['content-length'] ?? '0')
    if (declared > maxBytes) {
      res.destroy()
      return reject(new DocumentFetchError(`the document is larger than ${maxBytes} bytes`))
    }
    const chunks: Buffer[] = []
    let size = 0
    res.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBytes) {
        res.destroy(new DocumentFetchError(`the document is larger than ${maxBytes} bytes`))
        return
      }
      chunks.push(chunk)
    })
    res.on('error', reject)
    res.on('end', () =>
      resolve({ status, body: Buffer.concat(chunks).toString('utf8'), cacheControl }),
    )
  })
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' ? code : 'network error'
}
