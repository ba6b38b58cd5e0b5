import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApiKey } from '../../src/api/index.ts'
import { EventReader } from '../api/realtime/sse.ts'
import { type DemoUnderTest, startDemo } from './support.ts'

/** The demo's generated posts controller streams its changes; its readiness counts the streams. */
describe('the demo: GET /api/v1/posts/events', () => {
  let demo: DemoUnderTest
  let key: string

  beforeAll(async () => {
    demo = await startDemo()
    key = (await createApiKey(demo.ctx.database, { name: 'realtime', scopes: ['*'] })).rawKey
  })
  afterAll(async () => {
    await demo?.close()
  })

  it('tells a stream of a post created through the API, and /health counts the stream', async () => {
    const authorization = `Bearer ${key}`
    const response = await demo.app.request('/api/v1/posts/events?fields=id,title', {
      headers: { authorization },
    })
    expect(response.status).toBe(200)
    const events = new EventReader(response)
    expect(
      ((await (await demo.app.request('/health')).json()) as { streams: number }).streams,
    ).toBe(1)
    const created = await demo.app.request('/api/v1/posts', {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Live', body: 'x', author_id: 1 }),
    })
    expect(created.status).toBe(201)
    const { data } = (await created.json()) as { data: { id: number } }
    expect(await events.next()).toEqual({
      id: expect.any(String),
      event: 'created',
      data: { id: data.id, data: { id: data.id, title: 'Live' } },
    })
    await events.cancel()
  })
})
