// The dashboard in headless Chromium against the real service: sign in with a local link, create a project and
// keys, see the charts over seeded payloads, the payloads and the webhooks pages; with SCREENSHOTS=1 screenshots go to
// docs/screenshots. axe-core checks every page, empty and full, at a phone's and a laptop's width.
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core'
import { localSignInUrl } from '../../src/features/accounts/session-tokens.js'
import { WebhookDispatcher } from '../../src/features/webhooks/dispatcher/webhook-dispatcher.js'
import { ManualClock } from '../../src/platform/clock.js'
import { checkAtBothWidths, LAPTOP, PHONE } from '../support/axe.js'
import { browserSkip, launchChromium, screenshot } from '../support/chromium.js'
import { cspDirectives } from '../support/csp.js'
import { DESTINATION } from '../support/fixtures.js'
import { logoPng } from '../support/png.js'
import { freePort } from '../support/serve-process.js'
import { bearer, startTestService, type TestService } from '../support/service.js'
import { ensureWebBuild } from '../support/web-build.js'
import { answer, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js'
import { dispatchAll } from '../support/webhooks.js'

/** "Today" for the service: the seeded history covers the 30 UTC days that end on it. */
const TODAY = Date.UTC(2026, 2, 20, 12)
const DAY_MS = 86_400_000
/** Signed payloads rotate through these: three Xaman to two Crossmark to one GemWallet. */
const WALLETS = ['xaman', 'crossmark', 'xaman', 'gemwallet', 'crossmark', 'xaman']

/** The text of an element as laid out (Playwright's innerText): what a person reads, with line breaks between blocks. */
const shownText = (locator: Locator) => locator.innerText()

/**
 * A preformatted box wider than its column scrolls sideways: a keyboard must reach it (tabindex 0) and scroll it, and
 * a screen reader hears what it is (a named region). Checked at a phone's width, where it does scroll.
 */
async function assertScrollsByKeyboard(page: Page, box: Locator, name: string): Promise<void> {
  const before = page.viewportSize()
  await page.setViewportSize(PHONE)
  await page.waitForTimeout(100)
  assert.ok(await box.evaluate((element) => element.scrollWidth > element.clientWidth), `${name} scrolls sideways at 390 px`)
  assert.deepEqual(
    [await box.getAttribute('tabindex'), await box.getAttribute('role'), await box.getAttribute('aria-label')],
    ['0', 'region', name],
  )
  await box.focus()
  await page.keyboard.press('ArrowRight')
  // The browser scrolls smoothly: wait for the box to have moved.
  const scrolled = await page
    .waitForFunction((element) => element !== null && element.scrollLeft > 0, await box.elementHandle(), { timeout: 2000 })
    .then(() => true)
    .catch(() => false)
  assert.ok(scrolled, `${name} scrolls with the keyboard`)
  assert.equal(await box.evaluate((element) => getComputedStyle(element).outlineWidth), '3px', `${name} shows the focus ring`)
  if (before !== null) await page.setViewportSize(before)
}

describe('the dashboard in a browser', { skip: browserSkip }, () => {
  let t: TestService
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let receiver: WebhookReceiver
  /** The project's website, serving its proof file once the test publishes it. */
  let website: { origin: string; close(): Promise<void> }
  let proofFile: string | undefined
  const pageErrors: string[] = []
  /** axe-core's findings (any impact) over every page at both widths; the last test asserts there are none. */
  const violations: string[] = []
  let freeProjectId: string
  let proProjectId: string

  before(async () => {
    ensureWebBuild()
    // PUBLIC_URL must be where the browser really is: the Origin check compares the two.
    const port = await freePort()
    t = await startTestService('sqlite', {
      listen: true,
      clock: new ManualClock(TODAY),
      env: { PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: `http://127.0.0.1:${port}` },
    })
    receiver = await startWebhookReceiver()
    const server = http.createServer((request, response) => {
      const found = request.url === '/.well-known/countersign-verification.txt' && proofFile !== undefined
      response.writeHead(found ? 200 : 404, { 'content-type': 'text/plain' }).end(found ? `${proofFile}\n` : 'not found')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    website = {
      origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise((resolve) => server.close(() => resolve())),
    }
    browser = await launchChromium()
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'UTC' })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url })
    page = await context.newPage()
    page.on('pageerror', (error) => pageErrors.push(error.message))
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) pageErrors.push(message.text())
    })
  })
  after(async () => {
    await browser?.close()
    await receiver?.close()
    await website?.close()
    await t?.stop()
  })

  const open = async (pathname: string) => {
    await page.goto(`${t.url}${pathname}`)
    await page.locator('.loading').first().waitFor({ state: 'detached' })
  }
  /** SCREENSHOTS=1 keeps the screenshots, in docs/screenshots. */
  const shoot = (name: string) => screenshot(page, name)
  /** axe-core and screenshots at a phone's and a laptop's width (name.png, name-desktop.png). */
  const check = async (name: string) => {
    violations.push(...(await checkAtBothWidths(page, name)))
  }

  it('shows a visitor without a session how to sign in on a server without OpenID Connect', async () => {
    await open('/dashboard/projects/proj_x/keys')
    const signIn = page.getByTestId('sign-in')
    await signIn.waitFor()
    assert.match(await shownText(signIn), /countersign login-link/)
    assert.equal(await page.getByTestId('sign-in-link').count(), 0, 'no /auth/login button when OIDC is off')
  })

  it("offers the provider's sign-in when OpenID Connect is configured", async () => {
    // The provider is only contacted once someone follows the link, so none needs to run for this page.
    const withOidc = await startTestService('sqlite', {
      listen: true,
      env: { OIDC_ISSUER: 'http://127.0.0.1:9/issuer', OIDC_CLIENT_ID: 'countersign', OIDC_CLIENT_SECRET: 'secret' },
    })
    try {
      const other = await context.newPage()
      await other.goto(`${withOidc.url}/dashboard`)
      const signInLink = other.getByTestId('sign-in-link')
      await signInLink.waitFor()
      assert.equal(await signInLink.getAttribute('href'), '/auth/login')
      await other.close()
    } finally {
      await withOidc.stop()
    }
  })

  it('signs in with a one-time local link, and serves the shell under a strict policy', async () => {
    const admin = await t.service.ctx.accounts.ensureLocalAdmin()
    const { token } = await t.service.ctx.sessions.createLoginToken(admin.id)
    const response = await page.goto(localSignInUrl(t.config.publicUrl, token))
    assert.equal(new URL(page.url()).pathname, '/dashboard')
    const csp = cspDirectives(response?.headers()['content-security-policy'])
    assert.deepEqual([csp['script-src'], csp['style-src']], [["'self'"], ["'self'"]])
    await page.getByRole('heading', { name: 'Projects' }).waitFor()
    assert.match(await shownText(page.getByTestId('empty-state')), /Create your first project/)
    await check('dashboard-projects-empty')
  })

  it('answers a used sign-in link with a page that says how to get a new one, not raw JSON', async () => {
    const admin = await t.service.ctx.accounts.ensureLocalAdmin()
    const { token } = await t.service.ctx.sessions.createLoginToken(admin.id)
    const other = await browser.newContext({ locale: 'en-US' })
    const tab = await other.newPage()
    const errors: string[] = []
    tab.on('console', (message) => {
      if (message.type() === 'error' && !message.text().includes('401')) errors.push(message.text())
    })
    tab.on('pageerror', (error) => errors.push(error.message))
    assert.equal((await tab.goto(localSignInUrl(t.config.publicUrl, token)))?.status(), 200, 'the link signs in once')
    const again = await tab.goto(localSignInUrl(t.config.publicUrl, token))
    assert.equal(again?.status(), 401)
    assert.equal(await tab.title(), 'This sign-in link does not work · Countersign')
    assert.equal(await tab.locator('html').getAttribute('lang'), 'en')
    const problem = tab.getByTestId('sign-in-problem')
    assert.match(await shownText(problem), /countersign login-link/)
    // Styled by the dashboard's sheet (its sign-in column), with nothing blocked by the policy.
    assert.equal(await problem.evaluate((element) => getComputedStyle(element).maxWidth), '576px')
    const csp = cspDirectives(again?.headers()['content-security-policy'])
    assert.deepEqual([csp['script-src'], csp['style-src'], csp['default-src']], [["'self'"], ["'self'"], ["'none'"]])
    violations.push(...(await checkAtBothWidths(tab, 'dashboard-sign-in-link-used')))
    await tab.getByRole('link', { name: 'Go to the dashboard' }).click()
    await tab.getByRole('heading', { name: 'Projects' }).waitFor()
    assert.deepEqual(errors, [])
    await other.close()
  })

  it('creates a project and shows its key once, with a working copy button', async () => {
    await page.getByLabel('Project name').fill('Acme shop')
    await page.getByRole('button', { name: 'Create project' }).click()
    const key = page.getByTestId('new-project-key')
    await key.waitFor()
    assert.match(await shownText(key), /you will not see this again/)
    const apiKey = await page.getByTestId('new-project-key-value').inputValue()
    const listed = await t.inject({ method: 'GET', url: '/api/v1/payloads', headers: bearer(apiKey) })
    assert.equal(listed.statusCode, 200, 'the key shown is the project key')
    await key.getByRole('button', { name: 'Copy' }).click()
    await key.getByRole('button', { name: 'Copied' }).waitFor()
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), apiKey)
    await check('dashboard-new-key')

    await page.getByLabel('Project name').fill('Acme Pro')
    await page.getByRole('button', { name: 'Create project' }).click()
    await page.getByTestId('new-project-key').filter({ hasText: 'Acme Pro' }).waitFor()
    const projects = await t.service.ctx.accountProjects.list((await t.service.ctx.accounts.ensureLocalAdmin()).id)
    freeProjectId = projects.find((project) => project.name === 'Acme shop')?.id ?? ''
    proProjectId = projects.find((project) => project.name === 'Acme Pro')?.id ?? ''
    assert.ok(await t.service.ctx.projects.setPlan(proProjectId, 'pro'))

    await open('/dashboard')
    assert.equal(await page.getByTestId('new-project-key').count(), 0, 'a key is never shown again')
    const list = page.getByTestId('project-list')
    assert.deepEqual(await list.locator('.project-link').allInnerTexts(), ['Acme shop', 'Acme Pro'])
    assert.match(await shownText(list), /Pro/)
    await check('dashboard-projects')
  })

  it('shows a new project what to do first: a curl with this server and a placeholder key', async () => {
    await page.getByRole('link', { name: 'Acme shop' }).click()
    const curl = page.getByTestId('first-payload-curl')
    await curl.waitFor()
    const text = await shownText(curl)
    assert.match(text, new RegExp(`curl -X POST ${t.url}/api/v1/payloads`))
    assert.match(text, /Authorization: Bearer YOUR_API_KEY/)
    await assertScrollsByKeyboard(page, curl, 'Command to create a first payload')
    await check('dashboard-empty-overview')

    await page.getByRole('link', { name: 'Payloads' }).click()
    await page.getByRole('heading', { name: 'No payloads yet' }).waitFor()
    await assertScrollsByKeyboard(page, page.getByTestId('first-payload-curl'), 'Command to create a first payload')
    await check('dashboard-empty-payloads')

    await page.getByRole('link', { name: 'Webhooks' }).click()
    await page.getByRole('heading', { name: 'Webhooks need the Pro plan' }).waitFor()
    await assertScrollsByKeyboard(
      page,
      page.getByRole('region', { name: 'Command to move this project to Pro' }),
      'Command to move this project to Pro',
    )
    await check('dashboard-empty-webhooks')
  })

  it('creates a key with a name and revokes it after a confirmation', async () => {
    await page.getByRole('link', { name: 'API keys' }).click()
    await page.getByLabel('Key name').fill('Production server')
    await page.getByRole('button', { name: 'Create key' }).click()
    await page.getByTestId('new-key').waitFor()
    const apiKey = await page.getByTestId('new-key-value').inputValue()
    const rows = page.getByTestId('keys').locator('tbody tr')
    assert.equal(await rows.count(), 2)
    const row = rows.filter({ hasText: 'Production server' })
    assert.match(await shownText(row), /Never/)
    assert.ok(apiKey.startsWith((await shownText(row.locator('code'))).replace('…', '')), 'listed by its prefix')

    await row.getByRole('button', { name: 'Revoke Production server' }).click()
    const confirm = page.getByRole('alertdialog')
    assert.match(await shownText(confirm), /Revoke "Production server".*401/)
    await confirm.getByRole('button', { name: 'Cancel' }).click()
    assert.equal(await page.getByRole('alertdialog').count(), 0)
    assert.equal(
      (await t.inject({ method: 'GET', url: '/api/v1/payloads', headers: bearer(apiKey) })).statusCode,
      200,
      'cancel keeps the key',
    )

    await row.getByRole('button', { name: 'Revoke Production server' }).click()
    await check('dashboard-keys')
    await page.getByRole('alertdialog').getByRole('button', { name: 'Revoke key' }).click()
    await page.getByTestId('keys').locator('tbody tr').filter({ hasText: 'Production server' }).filter({ hasText: 'Revoked' }).waitFor()
    assert.equal((await t.inject({ method: 'GET', url: '/api/v1/payloads', headers: bearer(apiKey) })).statusCode, 401)
  })

  it('draws the overview charts from the seeded payloads, for 30 and 7 days', async () => {
    const expected = await seedHistory(t, freeProjectId)
    await open(`/dashboard/projects/${freeProjectId}`)
    const totals = page.getByTestId('totals')
    await totals.waitFor()
    const stat = (label: string) => shownText(totals.locator('div', { has: page.locator('dt', { hasText: label }) }).locator('dd'))
    assert.equal(await stat('Signed'), String(expected.signed))
    assert.equal(await stat('Rejected'), String(expected.rejected))
    assert.equal(await stat('Expired'), String(expected.expired))
    assert.equal(await stat('Pending'), String(expected.pending))
    const rate = Math.round((100 * expected.signed) / (expected.signed + expected.rejected + expected.expired))
    assert.equal(await page.getByTestId('signing-rate').locator('svg').getAttribute('aria-label'), `Signing rate ${rate}%`)

    const daily = page.getByTestId('daily-chart').locator('svg')
    assert.equal(await daily.locator('g.day').count(), 30)
    assert.equal(await daily.locator('rect.bar-signed').count(), 30, 'every day of the seeded month has signed payloads')
    assert.ok((await daily.locator('rect.bar-rejected').count()) > 0)
    assert.ok((await daily.locator('rect.bar-expired').count()) > 0)
    assert.match((await daily.getAttribute('aria-label')) ?? '', new RegExp(`${expected.signed} signed, ${expected.rejected} rejected`))
    // Named as on the signing page, not by the adapters' ids.
    assert.deepEqual(await page.getByTestId('wallet-chart').locator('text.label').allTextContents(), ['Xaman', 'Crossmark', 'GemWallet'])
    assert.match(
      (await page.getByTestId('wallet-chart').locator('svg').getAttribute('aria-label')) ?? '',
      /^Signed payloads by wallet: Xaman \d+, Crossmark \d+, GemWallet \d+$/,
    )
    const meter = page.getByTestId('usage').locator('svg[role="meter"]')
    assert.equal(await meter.getAttribute('aria-valuemax'), '1000')
    assert.equal(await meter.getAttribute('aria-valuenow'), String(expected.thisMonth))
    // Pending payloads are in the daily chart and its legend, not only in the totals.
    assert.equal(await daily.locator('rect.bar-pending').count(), 1, 'today has the pending payloads')
    assert.match((await daily.getAttribute('aria-label')) ?? '', new RegExp(`${expected.pending} pending`))
    assert.deepEqual(await page.locator('.legend li').allInnerTexts(), ['Signed', 'Rejected', 'Expired', 'Pending'])
    assert.match(await shownText(page.getByTestId('usage')), /% used/)
    await check('dashboard-overview')
    assert.equal(await page.title(), 'Acme shop · Countersign')

    // A resize just before the switch leaves the 30-day page's redraw waiting (150 ms); it must not draw its
    // figures over the 7-day page once that is shown.
    await page.setViewportSize({ width: 1200, height: 900 })
    await page.getByRole('button', { name: '7 days' }).click()
    await page.getByRole('heading', { name: 'Last 7 days' }).waitFor()
    assert.equal(await page.getByRole('button', { name: '7 days' }).getAttribute('aria-pressed'), 'true')
    assert.equal(await page.getByTestId('daily-chart').locator('g.day').count(), 7)
    await page.waitForTimeout(300)
    assert.equal(await page.getByTestId('daily-chart').locator('g.day').count(), 7, 'no stale redraw after the switch')
    await page.setViewportSize({ width: 1280, height: 900 })
  })

  it('lists payloads in pages with filters, and shows one with every field', async () => {
    await page.getByRole('link', { name: 'Payloads' }).click()
    const table = page.getByTestId('payloads')
    await table.waitFor()
    assert.equal(await table.locator('tbody tr').count(), 20)
    await page.getByRole('link', { name: 'Older →' }).click()
    await page.getByRole('link', { name: '← Newer' }).waitFor()

    await page.getByLabel('Status').selectOption('rejected')
    await page.waitForURL(/status=rejected/)
    await page.getByTestId('payloads').waitFor()
    const statuses = await page.getByTestId('payloads').locator('tbody tr .badge').allInnerTexts()
    assert.ok(statuses.length > 0 && statuses.every((status) => status === 'rejected'), statuses.join())
    await page.getByLabel('Status').selectOption('signed')
    await page.waitForURL(/status=signed/)
    await page.getByTestId('payloads').waitFor()
    await check('dashboard-payloads')

    // Search: by the start of a uuid, then by the signer's address; the filters stay.
    const firstUuid = ((await page.getByTestId('payloads').locator('tbody tr a').first().getAttribute('href')) ?? '').split('/').pop() ?? ''
    await page.getByRole('searchbox', { name: 'Search' }).fill(firstUuid.slice(0, 8))
    await page.getByRole('button', { name: 'Search' }).click()
    await page.waitForURL(new RegExp(`q=${firstUuid.slice(0, 8)}`))
    await page.getByTestId('payloads').waitFor()
    assert.equal(await page.getByTestId('payloads').locator('tbody tr').count(), 1)
    await page.getByRole('searchbox', { name: 'Search' }).fill(DESTINATION)
    await page.getByRole('button', { name: 'Search' }).click()
    await page.waitForURL(new RegExp(`q=${DESTINATION}`))
    await page.getByTestId('payloads').waitFor()
    assert.equal(await page.getByTestId('payloads').locator('tbody tr').count(), 20)
    await page.getByRole('searchbox', { name: 'Search' }).fill('nothing-like-it')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.getByTestId('empty-state').filter({ hasText: 'No payload matches “nothing-like-it”' }).waitFor()
    await check('dashboard-payloads-no-results')
    await page.getByRole('link', { name: 'Clear the search and filters' }).click()
    await page.getByTestId('payloads').waitFor()
    await page.getByLabel('Status').selectOption('signed')
    await page.waitForURL(/status=signed/)
    await page.getByTestId('payloads').waitFor()

    const walletCells = await page.getByTestId('payloads').locator('tbody td.cell-wallet').allInnerTexts()
    assert.ok(walletCells.length > 0 && walletCells.every((name) => ['Xaman', 'Crossmark', 'GemWallet'].includes(name)), walletCells.join())

    // A click anywhere on a row opens the payload, not only on its uuid.
    await page.getByTestId('payloads').locator('tbody tr').first().locator('td.cell-type').click()
    const fields = page.getByTestId('payload-fields')
    await fields.waitFor()
    const text = await shownText(fields)
    for (const label of [
      'UUID',
      'Type',
      'Status',
      'Signer address',
      'Public key',
      'Signature',
      'Message',
      'Custom instructions',
      'Return URL',
      'External id',
      'Metadata',
    ]) {
      assert.match(text, new RegExp(label))
    }
    assert.match(text, new RegExp(DESTINATION))
    // The deliveries load after the payload: wait for them, rather than read them while loading.
    await page.getByTestId('payload-deliveries').filter({ hasText: 'Webhooks need the Pro plan' }).waitFor()
    assert.match(await shownText(page.getByTestId('payload-deliveries')), /Webhooks need the Pro plan/)
    await check('dashboard-payload')
  })

  it('says on a Free project that webhooks need Pro', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click()
    await page.getByRole('heading', { name: 'Webhooks need the Pro plan' }).waitFor()
    assert.equal(await page.getByTestId('create-webhook').count(), 0)
  })

  it('creates a webhook on Pro (secret once), sends a test, retries it and shows a payload its deliveries', async () => {
    await open(`/dashboard/projects/${proProjectId}/webhooks`)
    await page.getByLabel('Endpoint URL').fill(receiver.url)
    await page.getByRole('checkbox', { name: 'payload.expired' }).uncheck()
    await page.getByRole('button', { name: 'Add webhook' }).click()
    const secret = page.getByTestId('new-webhook-secret')
    await secret.waitFor()
    assert.match(await page.getByTestId('new-webhook-secret-value').inputValue(), /^whsec_/)
    assert.match(await shownText(secret), /you will not see this again/)
    const card = page.getByTestId('webhooks').locator('.webhook')
    assert.match(await shownText(card), /payload\.signed, payload\.rejected ·/)

    const dispatcher = new WebhookDispatcher(t.service.ctx)
    // The receiver is down: the test event fails (a test is tried once), and only a failure offers Retry.
    receiver.respondWith(answer(500))
    await card.getByRole('button', { name: 'Send test event' }).click()
    await card.getByText('Test event queued').waitFor()
    await dispatchAll(dispatcher)
    assert.equal(receiver.requests.length, 1)
    await card.getByRole('button', { name: 'Refresh' }).click()
    const delivery = card.getByTestId('deliveries').locator('tbody tr').first()
    await delivery.filter({ hasText: 'failed' }).waitFor()
    assert.match(await shownText(delivery), /webhook\.test/)

    receiver.respondWith(answer(204))
    await delivery.getByRole('button', { name: /^Retry delivery/ }).click()
    await card.getByTestId('deliveries').locator('tbody tr').first().filter({ hasText: 'pending' }).waitFor()
    await dispatchAll(dispatcher)
    assert.equal(receiver.requests.length, 2)
    await card.getByRole('button', { name: 'Refresh' }).click()
    await card.getByTestId('deliveries').locator('tbody tr').first().filter({ hasText: 'succeeded' }).waitFor()
    assert.equal(await card.getByRole('button', { name: /^Retry delivery/ }).count(), 0, 'no Retry on a success')
    await check('dashboard-webhooks')

    await open(`/dashboard/projects/${proProjectId}/webhooks`)
    assert.equal(await page.getByTestId('new-webhook-secret').count(), 0, 'the secret is never shown again')

    const payload = await t.service.ctx.payloads.create(
      { projectId: proProjectId, plan: 'pro' },
      { type: 'signMessage', message: 'Pay Acme' },
    )
    await t.service.ctx.payloads.resolveSigned(payload.uuid, {
      walletAdapter: 'xaman',
      signerAddress: DESTINATION,
      publicKey: '02AB',
      signature: 'CD',
    })
    await dispatchAll(dispatcher)
    await open(`/dashboard/projects/${proProjectId}/payloads/${payload.uuid}`)
    const deliveries = page.getByTestId('payload-deliveries')
    await deliveries.locator('tbody tr').waitFor()
    assert.match(await shownText(deliveries), /payload\.signed\s+succeeded/)

    // The webhook's own page shows its delivery log at once, each payload uuid a link to the payload.
    await open(`/dashboard/projects/${proProjectId}/webhooks`)
    const log = page.getByTestId('webhooks').getByTestId('deliveries')
    await log.waitFor()
    await log.getByRole('link', { name: `Payload ${payload.uuid}` }).click()
    await page.getByTestId('payload-fields').waitFor()
    assert.equal(new URL(page.url()).pathname, `/dashboard/projects/${proProjectId}/payloads/${payload.uuid}`)

    // A receiver that answers 410 Gone disables the webhook; the card says so and enables it again in one click.
    receiver.respondWith(answer(410))
    await open(`/dashboard/projects/${proProjectId}/webhooks`)
    const webhookCard = page.getByTestId('webhooks').locator('.webhook')
    await webhookCard.getByRole('button', { name: 'Send test event' }).click()
    await webhookCard.getByText('Test event queued').waitFor()
    await dispatchAll(dispatcher)
    receiver.respondWith(answer(204))
    await open(`/dashboard/projects/${proProjectId}/webhooks`)
    assert.match(await shownText(webhookCard), /Disabled\s+since .*: the receiver answered 410 Gone\. Enable it to resume deliveries/)
    await webhookCard.getByRole('button', { name: 'Enable' }).click()
    await webhookCard.getByRole('button', { name: 'Enable' }).waitFor({ state: 'detached' })
    assert.doesNotMatch(await shownText(webhookCard), /Disabled/)
    assert.equal((await t.service.ctx.webhooks.list({ projectId: proProjectId, plan: 'pro' }))[0]?.disabledAtMs, null)

    await webhookCard.getByRole('button', { name: 'Delete' }).click()
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete webhook' }).click()
    await page.getByRole('heading', { name: 'No webhooks yet' }).waitFor()
    await check('dashboard-webhooks-none')
  })

  it('shows a payload with a long transaction, its externalId in the list, and an unknown payload within the project', async () => {
    const externalId = 'order-2026-03-20-000123'
    const { uuid } = await t.service.ctx.payloads.create(
      { projectId: proProjectId, plan: 'pro' },
      {
        type: 'sign',
        transaction: {
          TransactionType: 'Payment',
          Destination: DESTINATION,
          Amount: '1500000',
          DestinationTag: 4294967295,
          Memos: [{ Memo: { MemoType: '696E766F696365', MemoData: 'AB'.repeat(60) } }],
        },
        options: { externalId },
      },
    )
    await open(`/dashboard/projects/${proProjectId}/payloads`)
    const row = page
      .getByTestId('payloads')
      .locator('tbody tr')
      .filter({ has: page.getByRole('link', { name: `Payload ${uuid}` }) })
    assert.equal(await shownText(row.locator('td.cell-external')), externalId)
    assert.equal(await page.getByTestId('payloads').locator('th').nth(1).innerText(), 'External id')
    await page.setViewportSize(PHONE)
    // On a phone, a muted line of its own under the uuid, status, type and time.
    const box = await row.locator('td.cell-external').boundingBox()
    const uuidBox = await row.locator('td.cell-uuid').boundingBox()
    assert.ok(
      box && uuidBox && box.height > 0 && box.y > uuidBox.y + uuidBox.height,
      `${JSON.stringify(box)} under ${JSON.stringify(uuidBox)}`,
    )
    await page.setViewportSize({ width: 1280, height: 900 })
    await check('dashboard-payloads-external-id')

    await row.getByRole('link', { name: `Payload ${uuid}` }).click()
    const transaction = page.getByRole('region', { name: 'Transaction JSON' })
    await transaction.waitFor()
    // Once the deliveries are in, the page is drawn and has moved focus to its start: only then press keys.
    await page.getByTestId('payload-deliveries').getByText('No webhook delivery for this payload').waitFor()
    assert.match(await shownText(transaction), /"MemoData": "(AB){60}"/)
    await assertScrollsByKeyboard(page, transaction, 'Transaction JSON')
    await check('dashboard-payload-transaction')

    await open(`/dashboard/projects/${proProjectId}/payloads/00000000-0000-4000-8000-000000000000`)
    await page.getByTestId('payload-not-found').waitFor()
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Acme Pro Pro')
    assert.equal(
      await page.getByRole('navigation', { name: 'Project sections' }).getByRole('link', { name: 'Payloads' }).getAttribute('aria-current'),
      'page',
    )
    assert.match(await shownText(page.locator('#view')), /This project has no payload 00000000-0000-4000-8000-000000000000/)
    assert.equal(await page.title(), 'Acme Pro · Countersign')
    await check('dashboard-payload-not-found')
    await page.getByRole('link', { name: '← All payloads' }).click()
    await page.getByTestId('payloads').waitFor()
  })

  it('sets what the signing page shows: display name, a website verified by its proof file, a logo; the plan is shown', async () => {
    await open(`/dashboard/projects/${freeProjectId}/settings`)
    await page.getByTestId('plan').filter({ hasText: 'Payloads a month' }).waitFor()
    assert.match(await shownText(page.getByTestId('plan')), /Free[\s\S]*1,000/)
    // Durations in words, in the unit that measures them whole.
    assert.match(await shownText(page.getByTestId('plan')), /Shortest poll interval\s+3 seconds\s+Longest expiry\s+5 minutes/)

    await page.getByLabel('Display name').fill('Acme Shop')
    await page.getByLabel('Website').fill(website.origin)
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByTestId('saved').waitFor()
    assert.match(await shownText(page.getByTestId('website')), /Not verified/)
    const proofLine = (await page.getByTestId('proof-line').textContent()) ?? ''
    assert.match(proofLine, /^countersign-verification=/)

    // Not published yet: the owner is told why.
    await page.getByRole('button', { name: 'Check now' }).click()
    await page.getByTestId('verify-result').filter({ hasText: 'Not verified' }).waitFor()
    proofFile = proofLine
    await page.getByRole('button', { name: 'Check now' }).click()
    await page.getByTestId('verify-result').filter({ hasText: 'is verified' }).waitFor()
    assert.match(await shownText(page.getByTestId('website')), /Verified/)

    await page.getByLabel('Logo file').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: logoPng() })
    await page.getByRole('button', { name: 'Upload logo' }).click()
    const preview = page.getByTestId('logo-preview')
    await preview.waitFor()
    assert.ok(await preview.evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth === 48), 'the logo is served')
    // A file that is not an image is refused before it is sent.
    await page.getByLabel('Logo file').setInputFiles({ name: 'logo.svg', mimeType: 'image/svg+xml', buffer: Buffer.from('<svg/>') })
    await page.getByRole('button', { name: 'Upload logo' }).click()
    await page.getByTestId('logo').getByTestId('error').filter({ hasText: 'not a PNG, JPEG or WebP' }).waitFor()
    await check('dashboard-settings')

    // The signing page of this project now shows all three.
    const { uuid } = await t.service.ctx.payloads.create({ projectId: freeProjectId, plan: 'free' }, { type: 'signMessage', message: 'Hi' })
    const view = (await t.inject({ method: 'GET', url: `/api/v1/sign/${uuid}` })).json()
    assert.equal(view.project.name, 'Acme Shop')
    assert.equal(view.project.website, website.origin)
    assert.match(view.project.logoUrl, /^\/logos\//)
  })

  it('switches project from the header, keeping the section', async () => {
    await open(`/dashboard/projects/${freeProjectId}/keys`)
    const switcher = page.getByTestId('project-switcher')
    assert.equal(await switcher.locator('.switcher-label').innerText(), 'Acme shop')
    await switcher.locator('summary').click()
    await page.getByTestId('switcher-menu').getByRole('link', { name: 'Acme Pro' }).click()
    await page.getByRole('heading', { name: /Acme Pro/ }).waitFor()
    assert.equal(new URL(page.url()).pathname, `/dashboard/projects/${proProjectId}/keys`)
    assert.equal(await switcher.locator('.switcher-label').innerText(), 'Acme Pro')
    assert.equal(await switcher.getAttribute('open'), null, 'the menu closed')
    // The wordmark lines up with the content below it.
    const brand = await page.locator('.brand').boundingBox()
    const heading = await page.getByTestId('project-name').boundingBox()
    assert.ok(brand && heading && Math.abs(brand.x - heading.x) < 1, `${brand?.x} vs ${heading?.x}`)

    // Reached by the keyboard, it shows the ring every other control shows (the wordmark's, say): 3 px in the accent.
    await page.locator('.brand').focus()
    await page.keyboard.press('Tab')
    const ringOfFocused = () =>
      page.evaluate(() => {
        const style = getComputedStyle(document.activeElement as HTMLElement)
        return `${(document.activeElement as HTMLElement).tagName} ${style.outlineStyle} ${style.outlineWidth} ${style.outlineColor}`
      })
    const switcherRing = await ringOfFocused()
    await page.keyboard.press('Shift+Tab')
    const brandRing = await ringOfFocused()
    assert.match(brandRing, /^A solid 3px rgb/)
    assert.equal(switcherRing, brandRing.replace(/^A /, 'SUMMARY '))
  })

  it('keeps a 100-letter project name without a space inside its card and its key box', async () => {
    const name = 'y'.repeat(100)
    await open('/dashboard')
    await page.getByLabel('Project name').fill(name)
    await page.getByRole('button', { name: 'Create project' }).click()
    await page.getByTestId('new-project-key').filter({ hasText: name }).waitFor()
    for (const size of [PHONE, LAPTOP]) {
      await page.setViewportSize(size)
      await page.waitForTimeout(100)
      const spill = await page.evaluate(() => {
        const list = (document.querySelector('.project-list') as HTMLElement).getBoundingClientRect()
        const boxes = [...document.querySelectorAll<HTMLElement>('.project-list li, .secret-once, .created p')]
        return boxes
          .filter((box) => box.scrollWidth > box.clientWidth || box.getBoundingClientRect().right > list.right + 0.5)
          .map((box) => box.className || box.tagName)
      })
      assert.deepEqual(spill, [], `at ${size.width}px`)
    }
    await page.setViewportSize({ width: 1280, height: 900 })
    await check('dashboard-new-key-long-name')
  })

  it('fits a phone screen without sideways scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 })
    await open(`/dashboard/projects/${freeProjectId}`)
    await page.getByTestId('daily-chart').locator('svg').waitFor()
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
    assert.equal(overflow, 0)
    await shoot('dashboard-phone.png')
    await open(`/dashboard/projects/${freeProjectId}/payloads`)
    const row = await page.getByTestId('payloads').locator('tbody tr').first().boundingBox()
    assert.ok(row !== null && row.height < 90, `a payload is a compact row on a phone, not a tall card: ${row?.height} px`)
    const tabs = await page.locator('.tabs').evaluate((nav) => nav.scrollWidth - nav.clientWidth)
    assert.equal(tabs, 0, 'every tab is on screen, none hidden behind a sideways scroll')
    await shoot('dashboard-payloads-phone.png')
    await open(`/dashboard/projects/${freeProjectId}/keys`)
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), 0)
  })

  it('signs out', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByTestId('sign-in').waitFor()
    assert.equal(new URL(page.url()).pathname, '/dashboard')
  })

  it('raised no script error and no policy violation', () => {
    assert.deepEqual(pageErrors, [])
  })

  it('axe-core found no accessibility problem of any impact, and no page scrolls sideways, at a phone or a laptop width', () => {
    assert.ok(violations.length === 0, violations.join('\n'))
  })
})

/**
 * Payloads over the 30 days that end today: each day some signed (by rotating wallets), some rejected, and some
 * cancelled (expired); two still pending today. Returns the counts the overview must show.
 */
async function seedHistory(t: TestService, projectId: string) {
  const { payloads } = t.service.ctx
  const counts = { signed: 0, rejected: 0, expired: 0, pending: 0, thisMonth: 0 }
  const create = async (atMs: number) => {
    t.clock.set(atMs)
    if (new Date(atMs).getUTCMonth() === new Date(TODAY).getUTCMonth()) counts.thisMonth += 1
    return (
      await payloads.create(
        { projectId, plan: 'free' },
        { type: 'signMessage', message: 'Sign in to Acme shop', options: { customInstructions: 'Check the amount' } },
      )
    ).uuid
  }
  let wallet = 0
  for (let daysAgo = 29; daysAgo >= 0; daysAgo--) {
    const dayMs = TODAY - daysAgo * DAY_MS - 6 * 3_600_000
    for (let i = 0; i < 2 + ((daysAgo * 7) % 5); i++) {
      const uuid = await create(dayMs + i * 60_000)
      const walletAdapter = WALLETS[wallet++ % WALLETS.length] as string
      await payloads.resolveSigned(uuid, { walletAdapter, signerAddress: DESTINATION, publicKey: '02AB', signature: 'CD' })
      counts.signed += 1
    }
    for (let i = 0; i < daysAgo % 3; i++) {
      await payloads.reject(await create(dayMs + 3_600_000 + i * 60_000), 'xaman')
      counts.rejected += 1
    }
    if (daysAgo % 4 === 0) {
      await payloads.cancel(projectId, await create(dayMs + 7_200_000))
      counts.expired += 1
    }
  }
  await create(TODAY - 60_000)
  await create(TODAY - 30_000)
  counts.pending = 2
  t.clock.set(TODAY)
  return counts
}
