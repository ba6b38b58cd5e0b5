import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeEachDatabase, type TestDatabase } from '../../support/databases.ts'
import { type NotesApp, notesApp, notesDatabase } from './notes-app.ts'
import { EventReader } from './sse.ts'

type Json = Record<string, unknown>

const kindAndId = (e: { event: string; data: unknown }) => [e.event, (e.data as Json).id]

describeEachDatabase('GET /events: the changes kiln writes, as server-sent events', (backend) => {
  let test: TestDatabase
  let api: NotesApp

  beforeAll(async () => {
    test = await notesDatabase(backend)
    api = await notesApp(test.database)
  })
  afterAll(async () => {
    await api?.close()
    await test?.cleanup()
  })

  const stream = async (query = '', headers: Record<string, string> = api.writer) => {
    const response = await api.app.request(`/api/v1/notes/events${query}`, { headers })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/)
    return new EventReader(response)
  }
  const created = async (body: unknown) =>
    ((await (await api.request('POST', '/api/v1/notes', body)).json()) as { data: Json }).data

  it('each REST write, bulk ones and restore included, in order with rising ids', async () => {
    const events = await stream()
    // Each write waits for its events: a stream reads the record as it is when it reads it, so
    // an update read after the delete that followed it would be told as that delete.
    const got: Awaited<ReturnType<typeof events.take>> = []
    const wrote = async (count: number) => got.push(...(await events.take(count)))
    const one = await created({ title: 'one' })
    await wrote(1)
    const two = (await created([{ title: 'two' }, { title: 'three' }])) as unknown as Json[]
    await wrote(2)
    await api.request('PATCH', `/api/v1/notes/${one.id}`, { title: 'one!' })
    await wrote(1)
    await api.request(
      'PATCH',
      '/api/v1/notes',
      two.map((n) => ({ id: n.id, title: 'bulk' })),
    )
    await wrote(2)
    await api.request('DELETE', `/api/v1/notes/${one.id}`)
    await wrote(1)
    await api.request('POST', `/api/v1/notes/${one.id}/restore`)
    await wrote(1)
    await api.request('DELETE', `/api/v1/notes?ids=${two.map((n) => n.id).join(',')}`)
    await wrote(2)
    await events.cancel()
    expect(got.map((e) => [e.event, (e.data as Json).id])).toEqual([
      ['created', one.id],
      ['created', two[0]!.id],
      ['created', two[1]!.id],
      ['updated', one.id],
      ['updated', two[0]!.id],
      ['updated', two[1]!.id],
      ['deleted', one.id],
      ['restored', one.id],
      ['deleted', two[0]!.id],
      ['deleted', two[1]!.id],
    ])
    const ids = got.map((e) => Number(e.id))
    expect(ids).toEqual([...ids].sort((a, b) => a - b))
    expect(new Set(ids).size).toBe(ids.length)
    expect((got[3]!.data as { data: Json }).data.title).toBe('one!')
    expect(got[6]!.data as Json).toEqual({ id: one.id })
  })

  it('a read key gets no field, and no record, a GET would not give it', async () => {
    const reader = await api.key(['notes:read'])
    const headers = { authorization: reader.authorization }
    const whole = await stream('', headers)
    const narrow = await stream('?fields=id,title&filter[title]=seen', headers)
    const both = async (n: number, m = n) => {
      const [a, b] = [await whole.take(n), await narrow.take(m)]
      return [a.map(kindAndId), b.map(kindAndId), a, b] as const
    }
    // Each write waits for its events: a stream reads the record as it is when it reads it.
    const secret = await created({ title: 'seen', owner: 'staff', password_digest: 'x' })
    const open = await created({ title: 'seen', password_digest: 'pw-digest' })
    const [w1, n1, all] = await both(1)
    expect([w1, n1]).toEqual([[['created', open.id]], [['created', open.id]]])
    const other = await created({ title: 'unseen' })
    expect((await both(1, 0))[0]).toEqual([['created', other.id]])
    // The secret note moves into the reader's view, then out of it: its events end.
    await api.request('PATCH', `/api/v1/notes/${secret.id}`, { owner: 'public' })
    expect((await both(1)).slice(0, 2)).toEqual([
      [['updated', secret.id]],
      [['updated', secret.id]],
    ])
    await api.request('PATCH', `/api/v1/notes/${secret.id}`, { owner: 'staff' })
    expect((await both(1)).slice(0, 2)).toEqual([
      [['deleted', secret.id]],
      [['deleted', secret.id]],
    ])
    await api.request('DELETE', `/api/v1/notes/${open.id}`)
    const [w5, n5, , last] = await both(1)
    expect([w5, n5]).toEqual([[['deleted', open.id]], [['deleted', open.id]]])

    const shown = async (id: unknown, query = '') => {
      const response = await api.request('GET', `/api/v1/notes/${id}${query}`, undefined, headers)
      return ((await response.json()) as Json).data
    }
    await api.request('POST', `/api/v1/notes/${open.id}/restore`)
    expect((all[0]!.data as Json).data).toEqual(await shown(open.id))
    expect(JSON.stringify(all)).not.toMatch(/pw-digest|password_digest/)
    expect(last).toEqual([{ id: expect.any(String), event: 'deleted', data: { id: open.id } }])
    const first = await both(1)
    expect((first[3][0]!.data as Json).data).toEqual(await shown(open.id, '?fields=id,title'))
    await whole.cancel()
    await narrow.cancel()
  })

  it('a bad filter or field is the list’s 422 before the stream opens', async () => {
    const response = await api.app.request('/api/v1/notes/events?fields=nope', {
      headers: api.writer,
    })
    expect(response.status).toBe(422)
    const reader = await api.key(['other:read'])
    const refused = await api.app.request('/api/v1/notes/events', {
      headers: { authorization: reader.authorization },
    })
    expect(refused.status).toBe(403)
  })
})
