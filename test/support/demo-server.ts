import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import type { Hono } from 'hono'
import type { Browser } from 'playwright-core'
import type { DemoContext } from '../../examples/demo/src/context.ts'
import { startDemo } from '../demo/support.ts'
import { launchChromium } from './chromium.ts'

export interface ServedDemo {
  /** `http://127.0.0.1:<port>`: the app's `APP_URL`, so the OAuth issuer and the pages' origin. */
  origin: string
  ctx: DemoContext
  app: Hono
  /** Closes the server (its open connections too) and the demo's context. */
  close(): Promise<void>
}

export interface DemoServer extends ServedDemo {
  browser: Browser
}

/**
 * The demo app served on 127.0.0.1, on an in-memory PGlite: one per suite, started in
 * `beforeAll` and closed in `afterAll`. The server listens before the app is made, so that
 * `APP_URL` is its own origin; until then it answers 503.
 */
export async function serveDemo(env: Record<string, string>): Promise<ServedDemo> {
  let app: Hono | undefined
  const server = serve({
    fetch: (request) => (app ? app.fetch(request) : new Response(null, { status: 503 })),
    port: 0,
    hostname: '127.0.0.1',
  })
  const closeServer = () =>
    new Promise<void>((resolve) => {
      ;(server as { closeAllConnections?: () => void }).closeAllConnections?.()
      server.close(() => resolve())
    })
  await new Promise<void>((resolve) => server.once('listening', () => resolve()))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const demo = await startDemo({ env: { APP_URL: origin, ...env } }).catch(async (error) => {
    await closeServer()
    throw error
  })
  app = demo.app
  return {
    origin,
    ctx: demo.ctx,
    app: demo.app,
    close: async () => {
      await closeServer()
      await demo.close()
    },
  }
}

/** `serveDemo` with a headless Chromium for the suite's pages; `close` closes it first. */
export async function startDemoServer(env: Record<string, string>): Promise<DemoServer> {
  const served = await serveDemo(env)
  const browser = await launchChromium().catch(async (error) => {
    await served.close()
    throw error
  })
  return {
    ...served,
    browser,
    close: async () => {
      await browser.close()
      await served.close()
    },
  }
}
