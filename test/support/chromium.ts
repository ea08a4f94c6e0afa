// Headless Chromium for the browser tests, through playwright-core: whether they run, and how it is launched.
// Suites skip when there is no Chromium, unless REQUIRE_BROWSER=1, which makes its absence a failure.
import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'

const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

const chromiumMissing = !existsSync(CHROMIUM_PATH)
if (chromiumMissing && process.env.REQUIRE_BROWSER === '1') {
  throw new Error(`REQUIRE_BROWSER=1 but there is no Chromium at ${CHROMIUM_PATH} (set CHROMIUM_PATH)`)
}

/** The skip reason for a suite that needs Chromium, or false when it is there. */
export const browserSkip: string | false = chromiumMissing
  ? `no Chromium at ${CHROMIUM_PATH}: set CHROMIUM_PATH, or REQUIRE_BROWSER=1 to fail instead of skipping`
  : false

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  })
}
