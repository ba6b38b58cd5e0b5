import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { executablePath, hasChromium } from '../support/chromium.ts'
import { type DemoServer, startDemoServer } from '../support/demo-server.ts'
import { isCI } from '../support/env.ts'

if (!hasChromium && !isCI) {
  console.warn(
    `kiln tests: no chromium at ${executablePath}; the API docs browser test is skipped.`,
  )
}

describe.skipIf(!hasChromium && !isCI)('API docs (ReDoc) in a headless browser (demo app)', () => {
  let browser: Browser
  let base: string
  let demo: DemoServer | undefined

  beforeAll(async () => {
    demo = await startDemoServer({
      APP_NAME: 'Kiln Demo Docs',
      MCP_TOKEN_SECRET: 'docs-test-secret-0123456789-abcdefgh',
    })
    ;({ origin: base, browser } = demo)
  }, 120_000)

  afterAll(async () => demo?.close())

  it('renders offline: title and every resource tag, with no request to another host', async () => {
    const page = await browser.newPage()
    const foreign: string[] = []
    const failed: string[] = []
    // Offline: anything not served by the app itself is refused and recorded.
    await page.route('**/*', (route) => {
      const url = route.request().url()
      if (url.startsWith(base) || url.startsWith('data:') || url.startsWith('blob:')) {
        return route.continue()
      }
      foreign.push(url)
      return route.abort()
    })
    page.on('requestfailed', (request) => failed.push(request.url()))
    // Every request the page makes, and every console error (a CSP refusal is one).
    const requested: string[] = []
    page.on('request', (request) => requested.push(request.url()))
    const consoleErrors: string[] = []
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text())
    })
    page.on('pageerror', (error) => consoleErrors.push(error.message))
    const response = await page.goto(`${base}/api/docs`)
    expect(response?.status()).toBe(200)
    await page
      .getByRole('heading', { name: /Kiln Demo Docs/ })
      .first()
      .waitFor({ timeout: 30_000 })
    const spec = (await (await fetch(`${base}/api/openapi.json`)).json()) as {
      tags: Array<{ name: string }>
    }
    const tags = spec.tags.map((tag) => tag.name)
    expect(tags).toEqual(expect.arrayContaining(['comments', 'posts', 'users']))
    const menu = page.locator('.menu-content')
    for (const tag of tags) {
      await expect.poll(() => menu.getByText(tag, { exact: true }).count()).toBeGreaterThan(0)
    }
    await expect.poll(() => page.getByText('List posts').count()).toBeGreaterThan(0)
    // The side menu's attribution logo is mounted last: it must be there, and from no CDN.
    const logo = page.locator('img[alt="redocly logo"]')
    await expect.poll(() => logo.count()).toBeGreaterThan(0)
    expect(await logo.first().getAttribute('src')).toMatch(/^data:image\/svg\+xml,/)
    expect(
      await logo.first().evaluate((img: HTMLImageElement) => img.naturalWidth),
    ).toBeGreaterThan(0)
    expect(foreign).toEqual([])
    expect(requested.filter((url) => !url.startsWith(base) && !/^(data|blob):/.test(url))).toEqual(
      [],
    )
    expect(consoleErrors).toEqual([])
    expect(failed.filter((url) => url.startsWith(base))).toEqual([])
    await page.close()
  }, 60_000)
})
