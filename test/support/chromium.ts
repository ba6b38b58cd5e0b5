import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'
import { isCI } from './env.ts'

/** The Debian Chromium the page tests drive (`KILN_CHROMIUM` to use another). */
export const executablePath = process.env.KILN_CHROMIUM ?? '/usr/bin/chromium'
export const hasChromium = existsSync(executablePath)
/** Without Chromium the browser tests are skipped on a laptop, and fail in CI. */
export const skipBrowser = !hasChromium && !isCI

/** A headless Chromium for one suite; close it in `afterAll`. */
export async function launchChromium(): Promise<Browser> {
  if (!hasChromium) throw new Error(`CI=true needs chromium at ${executablePath}`)
  return chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  })
}
