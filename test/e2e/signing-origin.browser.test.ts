// SIGNING_URL in a real browser: an operator signed in to the dashboard opens a payload's signing page, and a script
// running there (what a flaw in the page would let a payload's author run) cannot act as the operator. Without
// SIGNING_URL the page shares the dashboard's origin, and such a script reads the session's account.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { localSignInUrl } from '../../src/features/accounts/session-tokens.js'
import { browserSkip, launchChromium } from '../support/chromium.js'
import { createPayload } from '../support/payloads.js'
import { freePort } from '../support/serve-process.js'
import { startTestService, type TestService } from '../support/service.js'
import { ensureWebBuild } from '../support/web-build.js'

describe('the signing pages on a host of their own, in a browser', { skip: browserSkip }, () => {
  let t: TestService
  let browser: Browser
  let page: Page
  let publicUrl: string
  let signingUrl: string
  let uuid: string

  before(async () => {
    ensureWebBuild()
    // Two host names of this machine, one port: the dashboard on localhost, the signing pages on 127.0.0.1.
    const port = await freePort()
    publicUrl = `http://localhost:${port}`
    signingUrl = `http://127.0.0.1:${port}`
    t = await startTestService('sqlite', {
      listen: true,
      env: { PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: publicUrl, SIGNING_URL: signingUrl },
    })
    const { apiKey } = await t.createProject('pro', 'example-shop')
    uuid = await createPayload(t, apiKey, { type: 'signMessage', message: 'Log in to Example Shop' })
    browser = await launchChromium()
    page = await (await browser.newContext()).newPage()
    // The operator signs in to the dashboard.
    const admin = await t.service.ctx.accounts.ensureLocalAdmin()
    const { token } = await t.service.ctx.sessions.createLoginToken(admin.id)
    await page.goto(localSignInUrl(publicUrl, token))
    assert.equal(new URL(page.url()).origin, publicUrl)
  })
  after(async () => {
    await browser?.close()
    await t?.stop()
  })

  /** What a script on the current page reads of the operator's session, here and on the dashboard's origin. */
  const sessionSeenByScript = async () => {
    // Given as text: the test's compiled functions carry helpers the page does not have.
    const read = (url: string) =>
      page.evaluate(`fetch(${JSON.stringify(url)}, { credentials: 'include' }).then(
        async (response) => response.status + ' ' + (await response.text()),
        () => 'blocked',
      )`) as Promise<string>
    return { here: await read('/api/v1/session'), dashboard: await read(`${publicUrl}/api/v1/session`) }
  }

  it('the dashboard reads its own session (the session the attack is after is there)', async () => {
    assert.match((await sessionSeenByScript()).here, /^200 .*"id"/)
  })

  it("a signing link opened on the dashboard's host lands on the signing host, where a script cannot read the session", async () => {
    await page.goto(`${publicUrl}/sign/${uuid}`)
    assert.equal(page.url(), `${signingUrl}/sign/${uuid}`)
    await page.getByText('Log in to Example Shop').waitFor()
    const seen = await sessionSeenByScript()
    assert.match(seen.here, /^401 /, 'no session on the signing host')
    assert.equal(seen.dashboard, 'blocked', "the dashboard's origin answers no script of the signing page's")
  })

  it('the dashboard asked for on the signing host is the dashboard on its own host', async () => {
    await page.goto(`${signingUrl}/dashboard`)
    assert.equal(page.url(), `${publicUrl}/dashboard`)
  })
})
