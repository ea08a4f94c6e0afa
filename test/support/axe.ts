// Accessibility checks in the browser tests: axe-core run on the page as it stands, at a phone's and a laptop's width.
import { AxeBuilder } from '@axe-core/playwright'
import type { Page } from 'playwright-core'
import { screenshot } from './chromium.js'

export const PHONE = { width: 390, height: 844 }
export const LAPTOP = { width: 1280, height: 800 }

/** axe-core's violations of every impact (critical, serious, moderate and minor), one line each: rule, help, and where. */
export async function axeViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).analyze()
  return results.violations.map(
    (violation) =>
      `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
  )
}

/**
 * Checks the page at both widths: axe-core's violations of every impact and any sideways overflow (returned,
 * prefixed with the state's name and the width), and a full-page screenshot each (`name`.png at the phone's width, `name`-desktop.png at the
 * laptop's; kept in docs/screenshots with SCREENSHOTS=1). Leaves the page at the width it had.
 */
export async function checkAtBothWidths(page: Page, name: string): Promise<string[]> {
  const before = page.viewportSize()
  const found: string[] = []
  for (const [size, suffix] of [
    [PHONE, ''],
    [LAPTOP, '-desktop'],
  ] as const) {
    await page.setViewportSize(size)
    // Layout settles after a resize (media queries, charts drawn at their box's width).
    await page.waitForTimeout(200)
    for (const violation of await axeViolations(page)) found.push(`${name} at ${size.width}px: ${violation}`)
    // Nothing may push the page wider than the screen (a phone user would scroll sideways to find it).
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
    if (overflow > 0) found.push(`${name} at ${size.width}px: the page is ${overflow}px wider than the screen`)
    await screenshot(page, `${name}${suffix}.png`)
  }
  if (before !== null) await page.setViewportSize(before)
  return found
}
