import { expect } from 'vitest'
import { type Cell, type Json, path } from './cell.ts'

/** One server-sent event of the documents' stream, its data parsed. */
export interface StreamEvent {
  event: string
  data: { id?: unknown; data?: Json; reason?: string }
}

let markers = 0

/**
 * What the documents' stream tells the app's `*` key, from the start of the retained window
 * (`Last-Event-ID: 0`) up to a marker record created just before: every change the cell has
 * made, each as the stream reads it for this key. `query` narrows it (`fields=title`).
 */
export async function streamed(cell: Cell, query = ''): Promise<StreamEvent[]> {
  const marker = await cell.rest('POST', path, { title: `Stream marker ${++markers}` })
  const markerId = (marker.body.data as Json).id
  const route = `${path}/events${query ? `?${query}` : ''}`
  const response = await cell.api.request('GET', route, undefined, {
    accept: 'text/event-stream',
    'last-event-id': '0',
  })
  expect(response.status).toBe(200)
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  const events: StreamEvent[] = []
  let buffer = ''
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) throw new Error(`the stream ended before the marker: ${JSON.stringify(events)}`)
      buffer += value
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const event = /^event: (.*)$/m.exec(block)?.[1]
        const data = /^data: (.*)$/m.exec(block)?.[1]
        if (!event || data === undefined) continue
        const parsed: StreamEvent = { event, data: JSON.parse(data) }
        events.push(parsed)
        if (event === 'created' && parsed.data.id === markerId) return events
      }
    }
  } finally {
    await reader.cancel().catch(() => {})
  }
}
