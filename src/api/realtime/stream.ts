/** One server-sent event: its name, its JSON data and, for a change, its id. */
export interface StreamMessage {
  event: string
  data: unknown
  id?: number | undefined
}

/** Why kiln ended a stream, in the `end` event's data (`{ reason }`). */
/** Why kiln ends a stream, in its `end` event: the one list the OpenAPI documents read too. */
export const END_REASONS = ['slow_consumer', 'key_rejected', 'shutdown', 'error'] as const
/** One of `END_REASONS`. */
export type EndReason = (typeof END_REASONS)[number]

const encoder = new TextEncoder()

/**
 * The bytes of each message, made once however many streams send it (the streams of one
 * instance reading a change alike share its message object). Dropped with the message.
 */
const encoded = new WeakMap<StreamMessage, Uint8Array>()

function bytesOf(message: StreamMessage): Uint8Array {
  let bytes = encoded.get(message)
  if (!bytes) {
    bytes = encoder.encode(formatEvent(message))
    encoded.set(message, bytes)
  }
  return bytes
}

/** The text of one event, as the SSE format writes it. */
export function formatEvent({ event, data, id }: StreamMessage): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
}

/**
 * A `text/event-stream` body whose unsent bytes are bounded: past `bufferBytes` queued for a
 * client that does not read, the stream is ended with `{ reason: 'slow_consumer' }`, so a slow
 * consumer costs at most its buffer. A client that hangs up ends it too.
 */
export class EventStream {
  readonly body: ReadableStream<Uint8Array>
  #controller!: ReadableStreamDefaultController<Uint8Array>
  #ended = false
  readonly #onEnd: (reason: EndReason | 'closed') => void

  constructor(bufferBytes: number, onEnd: (reason: EndReason | 'closed') => void) {
    this.#onEnd = onEnd
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller
        },
        cancel: () => this.#finish('closed'),
      },
      new ByteLengthQueuingStrategy({ highWaterMark: bufferBytes }),
    )
  }

  get ended(): boolean {
    return this.#ended
  }

  /** Queues an event; a client that has not read the buffer's worth ends the stream instead. */
  send(message: StreamMessage): void {
    this.#write(bytesOf(message))
  }

  /** A comment line: a heartbeat, which keeps proxies from cutting an idle stream. */
  comment(text: string): void {
    this.#write(encoder.encode(`: ${text}\n\n`))
  }

  /** Ends the stream with an `end` event saying why, which the client reads before the close. */
  end(reason: EndReason): void {
    if (this.#ended) return
    this.#enqueue(encoder.encode(formatEvent({ event: 'end', data: { reason } })))
    this.#finish(reason)
    try {
      this.#controller.close()
    } catch {
      // Already cancelled by the client.
    }
  }

  #write(bytes: Uint8Array): void {
    if (this.#ended) return
    if ((this.#controller.desiredSize ?? 0) <= 0) this.end('slow_consumer')
    else this.#enqueue(bytes)
  }

  #enqueue(bytes: Uint8Array): void {
    try {
      this.#controller.enqueue(bytes)
    } catch {
      this.#finish('closed')
    }
  }

  #finish(reason: EndReason | 'closed'): void {
    if (this.#ended) return
    this.#ended = true
    this.#onEnd(reason)
  }
}
