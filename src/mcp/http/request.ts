/**
 * What the MCP endpoint reads off a request before any server sees it: which era a message plainly belongs to, and whether its answer may carry
 * notifications; and the wrapper that closes a streamed exchange's server when it ends.
 */
import { randomBytes } from 'node:crypto'
import { PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server'

/** The revision whose requests the shortcut below sends to the modern entry unclassified. */
const MODERN_REVISION = '2026-07-28'

/**
 * A 2026-07-28 call for sure, without the SDK's classification (the modern entry classifies
 * and validates it in full anyway): one message whose envelope and `MCP-Protocol-Version`
 * header both claim the revision. The SDK classifies such a request as modern whatever else it
 * holds, so routing it straight there only saves classifying it twice.
 */
export function isPlainModernCall(request: Request, body: unknown): boolean {
  if (request.headers.get('mcp-protocol-version') !== MODERN_REVISION) return false
  const meta = paramsOf(body)?._meta
  return (
    meta !== null &&
    typeof meta === 'object' &&
    (meta as Record<string, unknown>)[PROTOCOL_VERSION_META_KEY] === MODERN_REVISION
  )
}

/**
 * A 2025-era call for sure, without the SDK's full classification (which the modern leg runs
 * again): one JSON-RPC message with no 2026 envelope claim in `params._meta` and no 2026
 * `MCP-Protocol-Version` header. Anything else is left to `isLegacyRequest`.
 */
export function isPlainLegacyCall(request: Request, body: unknown): boolean {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false
  const header = request.headers.get('mcp-protocol-version')
  if (header !== null && !/^(2024|2025)-/.test(header)) return false
  const params = (body as { params?: unknown }).params
  if (params === undefined) return true
  if (params === null || typeof params !== 'object') return false
  const meta = (params as { _meta?: unknown })._meta
  if (meta === undefined) return true
  return meta !== null && typeof meta === 'object' && !(PROTOCOL_VERSION_META_KEY in meta)
}

/**
 * The response with `done` called once its body has been read to the end or cancelled: an SSE
 * answer ends with the call's result, and only then may the request's server be closed.
 */
export function closingWhenDone(response: Response, done: () => void): Response {
  if (response.body === null) {
    done()
    return response
  }
  const reader = response.body.getReader()
  let finished = false
  const finish = () => {
    if (!finished) {
      finished = true
      done()
    }
  }
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: ended, value } = await reader.read()
        if (ended) {
          controller.close()
          finish()
        } else {
          controller.enqueue(value)
        }
      } catch (error) {
        controller.error(error)
        finish()
      }
    },
    async cancel(reason) {
      finish()
      await reader.cancel(reason)
    },
  })
  return new Response(body, { status: response.status, headers: response.headers })
}

export function acceptsEventStream(request: Request): boolean {
  return (request.headers.get('accept') ?? '').includes('text/event-stream')
}

function paramsOf(message: unknown): Record<string, unknown> | undefined {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return undefined
  const params = (message as { params?: unknown }).params
  return params !== null && typeof params === 'object'
    ? (params as Record<string, unknown>)
    : undefined
}

/** A request (or one of a batch) asking for progress notifications. */
export function hasProgressToken(body: unknown): boolean {
  if (Array.isArray(body)) return body.some(hasProgressToken)
  const meta = paramsOf(body)?._meta
  return meta !== null && typeof meta === 'object' && 'progressToken' in meta
}

export function isToolCall(body: unknown): boolean {
  if (Array.isArray(body)) return body.some(isToolCall)
  return (body as { method?: unknown } | null)?.method === 'tools/call'
}

/** The id a 2025-era client's `initialize` answer names its session with (`Mcp-Session-Id`). */
export function newSessionId(): string {
  return randomBytes(24).toString('base64url')
}

export function sessionOf(request: Request): string | undefined {
  const session = request.headers.get('mcp-session-id')
  return session && /^[\w-]{1,128}$/.test(session) ? session : undefined
}

export function withSession(response: Response, session: string): Response {
  const headers = new Headers(response.headers)
  headers.set('mcp-session-id', session)
  return new Response(response.body, { status: response.status, headers })
}

export function isCancellation(body: unknown): boolean {
  return (body as { method?: unknown } | null)?.method === 'notifications/cancelled'
}
