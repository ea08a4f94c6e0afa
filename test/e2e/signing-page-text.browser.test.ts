// The signing page against text that reorders or hides characters, in a real browser: a project name ending in
// U+202E (RIGHT-TO-LEFT OVERRIDE) once reversed the page's own sentences after it. Text from the application is
// isolated (<bdi>), and the page warns where it holds such characters.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { browserSkip, launchChromium } from '../support/chromium.js'
import { paymentTransaction } from '../support/fixtures.js'
import { createPayload } from '../support/payloads.js'
import { startTestService, type TestService } from '../support/service.js'
import { ensureWebBuild } from '../support/web-build.js'

const RLO = '\u202E'
const hex = (text: string) => Buffer.from(text, 'utf8').toString('hex').toUpperCase()

describe('the signing page and direction-changing characters', { skip: browserSkip }, () => {
  let t: TestService
  let browser: Browser
  let apiKey: string

  before(async () => {
    ensureWebBuild()
    t = await startTestService('sqlite', { listen: true })
    // Stored as an older version let it through: the API now refuses such a name (test/features/projects).
    ;({ apiKey } = await t.createProject('pro', `Evil Shop${RLO}`))
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
    await t?.stop()
  })

  async function open(body: object): Promise<Page> {
    const uuid = await createPayload(t, apiKey, body)
    const page = await (await browser.newContext({ viewport: { width: 420, height: 900 } })).newPage()
    await page.goto(`${t.url}/sign/${uuid}`)
    await page.getByTestId('project-name').waitFor()
    return page
  }

  /**
   * Whether the page's own words after the project name in the heading are laid out left to right, as written: the
   * left edges of "a", "s", "k" of "asks" increase. (A string, so that no helper of the test's compiler reaches the page.)
   */
  const headingReadsLeftToRight = (page: Page) =>
    page.evaluate<boolean>(`(() => {
      const heading = document.querySelector('h1')
      const own = [...heading.childNodes].find((node) => node.nodeType === Node.TEXT_NODE && node.textContent.includes('asks you to'))
      const first = own.textContent.indexOf('asks')
      const lefts = [0, 1, 2].map((offset) => {
        const range = document.createRange()
        range.setStart(own, first + offset)
        range.setEnd(own, first + offset + 1)
        return range.getBoundingClientRect().left
      })
      return lefts[0] < lefts[1] && lefts[1] < lefts[2]
    })()`)

  it("keeps a project name ending in U+202E from reversing the page's own sentence after it", async () => {
    const page = await open({ type: 'sign', transaction: paymentTransaction() })
    assert.equal(await headingReadsLeftToRight(page), true, '"asks you to" is laid out reversed')
    const name = page.getByTestId('project-name')
    assert.equal(await name.evaluate((element) => element.tagName), 'BDI')
    assert.equal(await name.textContent(), `Evil Shop${RLO}`)
    assert.equal(await page.title(), `Sign a transaction · \u2068Evil Shop${RLO}\u2069`)
  })

  it('isolates customInstructions and a memo, and warns visibly when they hold such characters', async () => {
    const note = `Refund of ${RLO}001 XRP`
    const memo = `invoice\u200B42`
    const transaction = { ...paymentTransaction(), Memos: [{ Memo: { MemoData: hex(memo) } }] }
    const page = await open({ type: 'sign', transaction, options: { customInstructions: note } })
    const instructions = page.getByTestId('custom-instructions')
    assert.equal(await instructions.evaluate((element) => element.tagName), 'BDI')
    assert.equal(await instructions.textContent(), note)
    assert.ok(await page.getByTestId('custom-instructions-warning').isVisible())
    assert.match((await page.getByTestId('custom-instructions-warning').textContent()) ?? '', /invisible or direction-changing/)
    const memoWarning = page.getByTestId('tx-field-MemoData-warning')
    assert.ok(await memoWarning.isVisible())
    assert.equal(await page.locator('q bdi', { hasText: 'invoice' }).count(), 1)
  })

  it('shows no warning for plain text', async () => {
    const page = await open({ type: 'sign', transaction: paymentTransaction(), options: { customInstructions: 'Order 42, thank you' } })
    assert.equal(await page.getByTestId('custom-instructions-warning').count(), 0)
  })
})
