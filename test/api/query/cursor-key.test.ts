import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { setCursorKey } from '../../../src/api/index.ts'
import { describeEachDatabase } from '../../support/databases.ts'
import { type QueryApp, startQueryApp } from './support.ts'

/** A cursor's payload signed as kiln once signed every cursor: with a key anyone can know. */
function signedWithPublicKey(cursor: string, table: string): string {
  const [payload] = cursor.split('.') as [string]
  const mac = createHmac('sha256', `kiln-cursor:${table}`)
    .update(payload)
    .digest('base64url')
    .slice(0, 32)
  return `${payload}.${mac}`
}

describeEachDatabase('cursors are signed with the app’s key', (backend) => {
  let q: QueryApp

  beforeAll(async () => {
    q = await startQueryApp(backend)
    await q.seed(12)
  })
  afterAll(async () => {
    await q?.close()
  })

  const page = async (cursor: string) => {
    const response = await q.get(`/posts?sort=title&per_page=5&cursor=${cursor}`)
    const body = (await response.json()) as {
      meta: { next_cursor?: string | null }
      errors?: Record<string, string[]>
    }
    return { status: response.status, body }
  }

  it('refuses a cursor forged with the old public key (reproduction)', async () => {
    const cursor = (await page('')).body.meta.next_cursor as string
    expect((await page(cursor)).status).toBe(200)
    const forged = await page(signedWithPublicKey(cursor, 'posts'))
    expect(forged.status).toBe(422)
    expect(forged.body.errors?.cursor).toEqual(['is not a valid cursor'])
  })

  it('APP_KEY signs them: the same key on another instance reads them, another key does not', async () => {
    setCursorKey('an-app-key-of-32-characters-or-more-0001')
    const cursor = (await page('')).body.meta.next_cursor as string
    // Another instance of the app, started with the same APP_KEY.
    setCursorKey('an-app-key-of-32-characters-or-more-0001')
    expect((await page(cursor)).status).toBe(200)
    setCursorKey('another-app-key-of-32-characters-or-more')
    expect((await page(cursor)).status).toBe(422)
    expect(() => setCursorKey('short')).toThrow(/32 or more characters \(APP_KEY\)/)
  })
})
