/** One server-sent event as a client reads it. */
export interface ReadEvent {
  id?: string
  event: string
  data: unknown
}

/**
 * Reads a `text/event-stream` body event by event (comments skipped), as EventSource does.
 * `next()` waits for the next event; `rest()` reads to the end.
 */
export class EventReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>
  readonly #decoder = new TextDecoder()
  #text = ''
  #done = false

  constructor(response: Response) {
    this.#reader = response.body!.getReader()
  }

  async next(): Promise<ReadEvent | undefined> {
    for (;;) {
      const end = this.#text.indexOf('\n\n')
      if (end >= 0) {
        const block = this.#text.slice(0, end)
        this.#text = this.#text.slice(end + 2)
        const event = parseBlock(block)
        if (event) return event
        continue
      }
      if (this.#done) return undefined
      const { value, done } = await this.#reader.read()
      if (done) this.#done = true
      else this.#text += this.#decoder.decode(value, { stream: true })
    }
  }

  /** The next `n` events. */
  async take(n: number): Promise<ReadEvent[]> {
    const events: ReadEvent[] = []
    while (events.length < n) {
      const event = await this.next()
      if (!event) throw new Error(`the stream ended after ${events.length} of ${n} events`)
      events.push(event)
    }
    return events
  }

  /** Every event until the stream ends. */
  async rest(): Promise<ReadEvent[]> {
    const events: ReadEvent[] = []
    for (let event = await this.next(); event; event = await this.next()) events.push(event)
    return events
  }

  async cancel(): Promise<void> {
    await this.#reader.cancel().catch(() => {})
  }
}

function parseBlock(block: string): ReadEvent | undefined {
  const fields: Record<string, string> = {}
  for (const line of block.split('\n')) {
    if (line.startsWith(':') || line === '') continue
    const colon = line.indexOf(':')
    fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '')
  }
  if (fields.event === undefined && fields.data === undefined) return undefined
  return {
    ...(fields.id === undefined ? {} : { id: fields.id }),
    event: fields.event ?? 'message',
    data: fields.data === undefined ? undefined : JSON.parse(fields.data),
  }
}
