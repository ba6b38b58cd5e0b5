/**
 * The part of a generated client's runtime that reads event streams (`subscribe`), written into
 * it as source when the API documents a stream: the options and the one server-sent events
 * reader, on plain `fetch`. It uses `caller`'s `ClientOptions` and `ApiClientError`.
 */
export const STREAM_RUNTIME = `/** What \`subscribe\` takes: the stream's query (\`filter\`, \`fields\`, \`search\`), a resume point and a stop. */
export type SubscribeOptions<Q> = Q & {
  /** Resume after this event's id (\`Last-Event-ID\`): the retained events after it come first. */
  lastEventId?: string
  /** Aborting it ends the iteration. */
  signal?: AbortSignal
}

/**
 * One resource's stream as an async iterator of its events, each \`{ id, event, data }\` with
 * \`data\` parsed. It ends when the server ends the stream (after an \`end\` event), when the
 * signal aborts or when the loop breaks. A refusal before the stream opens (401, 422, 429)
 * throws an \`ApiClientError\` with the status.
 */
function subscriber(options: ClientOptions) {
  const base = options.baseUrl.replace(/\\/+$/, '')
  return async function* stream<E>(path: string, init: SubscribeOptions<object>): AsyncGenerator<E> {
    const { lastEventId, signal, ...query } = init
    const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers }
    const key = typeof options.apiKey === 'function' ? await options.apiKey() : options.apiKey
    if (key) headers['authorization'] = \`Bearer \${key}\`
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId
    const response = await (options.fetch ?? fetch)(\`\${base}\${path}\${queryString(query)}\`, {
      headers,
      ...(signal ? { signal } : {}),
    })
    if (!response.ok || !response.body) {
      await response.body?.cancel()
      throw new ApiClientError(\`GET \${path} answered \${response.status}\`, response.status, response)
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
    let buffer = ''
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) return
        buffer += value
        let end = buffer.search(/\\r?\\n\\r?\\n/)
        while (end >= 0) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end).replace(/^\\r?\\n\\r?\\n/, '')
          const event = parseEvent(block)
          if (event) yield event as E
          end = buffer.search(/\\r?\\n\\r?\\n/)
        }
      }
    } catch (error) {
      if (signal?.aborted) return
      throw error
    } finally {
      void reader.cancel().catch(() => {})
    }
  }
}

/** One event block: its \`id\`, \`event\` and \`data\` lines (comments, heartbeats, are skipped). */
function parseEvent(block: string): { id?: string; event: string; data: unknown } | undefined {
  let id: string | undefined
  let event = 'message'
  const data: string[] = []
  for (const line of block.split(/\\r?\\n/)) {
    if (line === '' || line.startsWith(':')) continue
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
    if (field === 'id') id = value
    else if (field === 'event') event = value
    else if (field === 'data') data.push(value)
  }
  if (data.length === 0) return undefined
  return { ...(id !== undefined ? { id } : {}), event, data: JSON.parse(data.join('\\n')) }
}
`
