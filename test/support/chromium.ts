// Headless Chromium for the browser tests, through playwright-core: whether they run, how it is launched, and where
// their screenshots go. Suites skip when there is no Chromium, unless REQUIRE_BROWSER=1, which makes its absence a
// failure. The screenshots in docs/screenshots are rewritten only when asked, with SCREENSHOTS=1.
import { existsSync, mkdirSync } from 'node:fs'
import path from 'node:path'
import { type Browser, chromium, type Page } from 'playwright-core'

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

const SCREENSHOTS_DIR = path.resolve(import.meta.dirname, '..', '..', 'docs', 'screenshots')

/**
 * Takes a full-page screenshot of `page`, the page laid out and drawn whole; with SCREENSHOTS=1 it is written to
 * docs/screenshots/`name`, else it is dropped, so that a test run leaves the tree as it was.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.SCREENSHOTS !== '1') {
    await page.screenshot({ fullPage: true })
    return
  }
  mkdirSync(SCREENSHOTS_DIR, { recursive: true })
  await page.screenshot({ path: path.join(SCREENSHOTS_DIR, name), fullPage: true })
}
