import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium, skipBrowser } from '../../support/chromium.ts'
import { databaseBackends, type TestDatabase } from '../../support/databases.ts'
import { type NotesApp, notesApp, notesDatabase } from './notes-app.ts'

/** A page that lists each note created, as its EventSource tells it. */
const PAGE = `<!doctype html><meta charset="utf-8"><title>notes</title><ul id="notes"></ul>
<p id="state">connecting</p>
<script>
  const source = new EventSource('/api/v1/notes/events')
  source.onopen = () => { document.getElementById('state').textContent = 'open' }
  source.addEventListener('created', (event) => {
    const { data } = JSON.parse(event.data)
    const item = document.createElement('li')
    item.textContent = data.title
    document.getElementById('notes').append(item)
  })
</script>`

describe.skipIf(skipBrowser)('an EventSource in headless Chromium', () => {
  let test: TestDatabase
  let api: NotesApp
  let server: Server
  let origin: string
  let browser: Browser

  beforeAll(async () => {
    test = await notesDatabase(databaseBackends.find((b) => b.name === 'sqlite')!)
    api = await notesApp(test.database)
    api.app.get('/', (c) => c.html(PAGE))
    await new Promise<void>((resolve) => {
      server = serve({ fetch: api.app.fetch, hostname: '127.0.0.1', port: 0 }, () =>
        resolve(),
      ) as Server
    })
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
    await api?.close()
    server?.closeAllConnections()
    await new Promise((resolve) => server?.close(resolve))
    await test?.cleanup()
  })

  it('shows a record created through the API', async () => {
    const context = await browser.newContext()
    // An EventSource sends no header of its own: the key rides on every request of the page.
    await context.setExtraHTTPHeaders({ authorization: api.writer.authorization })
    const page = await context.newPage()
    await page.goto(origin)
    await page.waitForFunction(() => document.getElementById('state')?.textContent === 'open')
    const response = await fetch(`${origin}/api/v1/notes`, {
      method: 'POST',
      headers: { ...api.writer, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Seen in the browser' }),
    })
    expect(response.status).toBe(201)
    await page.waitForSelector('#notes li')
    expect(await page.locator('#notes li').allTextContents()).toEqual(['Seen in the browser'])
    await context.close()
  })
})
