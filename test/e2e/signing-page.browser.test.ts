// The signing page in a real browser (headless Chromium through playwright-core) against the real service: a person
// signs, rejects and lets expire each payload type with the developer wallet, and hostile content stays inert.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { gzipSync } from 'node:zlib'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { Wallet } from 'xrpl'
import { projectsRepository } from '../../src/features/projects/repository.js'
import { FOLLOW_INTERVAL_MS } from '../../src/features/signing/transaction-follower.js'
import { SETTLED_LEDGERS } from '../../src/platform/xrpl/xrpl-node.js'
import { checkAtBothWidths, LAPTOP, PHONE } from '../support/axe.js'
import { browserSkip, launchChromium } from '../support/chromium.js'
import { DESTINATION, paymentTransaction } from '../support/fixtures.js'
import { createPayload, readPayload } from '../support/payloads.js'
import { logoPng } from '../support/png.js'
import { type RippledDouble, startRippledDouble } from '../support/rippled-double.js'
import { startTestService, type TestService } from '../support/service.js'
import { signRequested, WALLET_FIELDS } from '../support/wallet-signing.js'
import { ensureWebBuild } from '../support/web-build.js'

const HOSTILE = '<img src=x onerror=window.__xss=1><script>window.__xss=2</script> Pay only if the order number is 42.'
/**
 * What the first load of a signing page may transfer, uncompressed as this service sends it (docs/signing.md, "Page
 * weight"): the page, its script and style, the wallet libraries loaded to detect the extensions, and the API calls.
 */
const FIRST_LOAD_BUDGET_BYTES = 250_000
/** A phone-sized window: the page is built phone first. */
const VIEWPORT = PHONE

interface OpenedPage {
  page: Page
  context: BrowserContext
  /** Content-Security-Policy violations the page reported, and errors it threw. */
  problems: string[]
  /** Bytes the browser received (headers and bodies) per URL. */
  transferred: Map<string, number>
}

describe('the signing page in a browser', { skip: browserSkip }, () => {
  let t: TestService
  let rippled: RippledDouble
  let browser: Browser
  let apiKey: string
  let projectId: string
  const opened: OpenedPage[] = []
  /** axe-core's findings of any impact, over every state at both widths. */
  const violations: string[] = []

  before(async () => {
    ensureWebBuild()
    rippled = await startRippledDouble()
    // Workers run: the expiry sweeper is what expires a payload nobody reads, and what the page then learns of.
    t = await startTestService('sqlite', { listen: true, workers: true, env: { XRPL_NODE_URL: rippled.url } })
    ;({ apiKey, projectId } = await t.createProject('pro', 'example-shop'))
    // What the owner sets in the dashboard: a display name, a website (verified), a logo.
    const { db } = t.service.ctx.storage
    await projectsRepository.setDisplayName(db, projectId, 'Example Shop')
    await projectsRepository.setWebsite(db, projectId, { url: 'https://shop.example', token: 'proof' })
    await projectsRepository.setWebsiteVerifiedAt(db, projectId, 'https://shop.example', t.clock.now())
    const logo = logoPng()
    await projectsRepository.putLogo(db, projectId, {
      contentType: 'image/png',
      bytes: logo,
      sha256: createHash('sha256').update(logo).digest('hex'),
      updatedAtMs: t.clock.now(),
    })
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
    await t?.stop()
    await rippled?.close()
  })

  const create = (body: object) => createPayload(t, apiKey, body)
  const appView = (uuid: string) => readPayload(t, apiKey, uuid)

  async function open(uuid: string): Promise<OpenedPage> {
    const context = await browser.newContext({ viewport: VIEWPORT, colorScheme: 'light' })
    const page = await context.newPage()
    const problems: string[] = []
    const transferred = new Map<string, number>()
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => {
        console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`)
      })
    })
    page.on('console', (message) => {
      if (/Content Security Policy|CSP violation/i.test(message.text())) problems.push(message.text())
    })
    page.on('pageerror', (error) => problems.push(`page error: ${error.message} ${error.stack ?? ''}`))
    page.on('requestfinished', async (request) => {
      const sizes = await request.sizes()
      transferred.set(request.url(), (transferred.get(request.url()) ?? 0) + sizes.responseHeadersSize + sizes.responseBodySize)
    })
    await page.goto(`${t.url}/sign/${uuid}`)
    await page.getByTestId('project-name').or(page.getByTestId('outcome')).or(page.getByTestId('error')).first().waitFor()
    const result = { page, context, problems, transferred }
    opened.push(result)
    return result
  }

  /** Picks the developer wallet and generates a key; returns its address. */
  async function chooseDeveloperWallet(page: Page): Promise<string> {
    await page.getByTestId('wallet-developer').click()
    await page.getByTestId('dev-generate').click()
    const text = await page
      .getByTestId('dev-address')
      .filter({ hasText: /Address: r/ })
      .textContent()
    const address = /Address: (r\w+)/.exec(text ?? '')?.[1]
    assert.ok(address, `an address is shown: ${text}`)
    return address
  }

  async function outcome(page: Page, status: 'signed' | 'rejected' | 'expired'): Promise<void> {
    await page.locator(`[data-testid="outcome"][data-status="${status}"]`).waitFor({ timeout: 10_000 })
  }

  /** Another device approves the request, and the node holds its blob (terPRE_SEQ): 409, the submission in doubt. */
  async function approveElsewhereInDoubt(uuid: string): Promise<void> {
    rippled.setSubmitResult('terPRE_SEQ')
    try {
      const signed = signRequested(Wallet.generate(), paymentTransaction('1000000'))
      const response = await t.inject({
        method: 'POST',
        url: `/api/v1/sign/${uuid}/approve`,
        payload: { walletAdapter: 'gemwallet', signedTransaction: signed.tx_blob },
      })
      assert.equal(response.statusCode, 409, response.body)
    } finally {
      rippled.setSubmitResult('tesSUCCESS')
    }
  }

  /** The caution of a request whose submission is in doubt. */
  const inDoubt = (on: Page) => on.getByTestId('error').filter({ hasText: 'Your transaction may already be on its way' })

  /** Waits until every wallet has been detected (or not), so that a screenshot shows the page at rest. */
  const settled = (page: Page) =>
    page.waitForFunction(() => !document.body.textContent?.includes('Checking…'), undefined, { timeout: 10_000 })

  /**
   * The page at rest, at a phone's and a laptop's width: axe-core's findings are collected (the last test asserts
   * there are none), and screenshots taken (SCREENSHOTS=1 keeps them in docs/screenshots, name.png and name-desktop.png).
   */
  const shoot = async (page: Page, name: string) => {
    await settled(page)
    violations.push(...(await checkAtBothWidths(page, name.replace(/\.png$/, ''))))
  }

  /** The gzip size of the static responses among urls, fetched again: what a compressing proxy in front would send. */
  const gzippedBytes = async (urls: string[]) => {
    let bytes = 0
    for (const url of urls) {
      if (!new URL(url).pathname.startsWith('/assets/') && !new URL(url).pathname.startsWith('/sign/')) continue
      bytes += gzipSync(Buffer.from(await (await fetch(url)).arrayBuffer()), { level: 9 }).length
    }
    return bytes
  }

  for (const type of ['sign', 'signAndSubmit', 'signMessage', 'connect'] as const) {
    it(`${type}: approving with the developer wallet resolves it, verified by the service`, async () => {
      const body =
        type === 'sign' || type === 'signAndSubmit'
          ? { type, transaction: { ...paymentTransaction('1500000'), DestinationTag: 4242 }, options: { customInstructions: 'Order #42' } }
          : type === 'signMessage'
            ? { type, message: 'I agree to the Example Shop terms of 1 March 2026.' }
            : { type }
      const uuid = await create(body)
      const { page } = await open(uuid)
      if (type === 'sign') {
        await page.getByTestId('payment-amount').waitFor()
        assert.match((await page.getByTestId('payment-amount').textContent()) ?? '', /1\.5 XRP/)
      }
      if (type === 'signMessage') assert.equal(await page.getByTestId('message').textContent(), body.message)
      if (type === 'connect') {
        assert.match((await page.getByTestId('challenge').textContent()) ?? '', new RegExp(`Payload ID: ${uuid}`))
        await page.getByText('Example Shop will learn your XRP Ledger address.').waitFor()
      }

      const address = await chooseDeveloperWallet(page)
      if (type === 'sign') {
        // No extension is installed in this browser: the page says so instead of offering them.
        await settled(page)
        assert.match((await page.getByTestId('wallet-gemwallet').textContent()) ?? '', /GemWallet is not installed/)
        assert.match((await page.getByTestId('wallet-crossmark').textContent()) ?? '', /Crossmark is not installed/)
        await shoot(page, 'signing-pending.png')
      }
      if (type === 'signMessage') await shoot(page, 'signing-message.png')
      if (type === 'connect') await shoot(page, 'signing-connect.png')
      await page.getByTestId('approve').click()
      await outcome(page, 'signed')
      assert.equal(await page.getByTestId('signer-address').textContent(), address)

      const view = await appView(uuid)
      assert.equal(view.status, 'signed')
      assert.equal(view.signerAddress, address)
      assert.equal(view.walletAdapter, 'developer')
      if (type === 'sign' || type === 'signAndSubmit') {
        assert.match(view.txHash, /^[0-9A-F]{64}$/)
        assert.equal(await page.getByTestId('tx-hash').textContent(), view.txHash)
      } else {
        assert.equal(view.txHash, null)
        assert.match(view.signature, /^[0-9A-F]+$/)
      }
      if (type === 'signAndSubmit') {
        assert.equal(view.submission.engineResult, 'tesSUCCESS')
        assert.ok(rippled.submitted.includes(view.txBlob))
      }
      if (type === 'sign') {
        // Countersign did not submit it: no explorer link that would find nothing, and the page says who may submit it.
        assert.equal(
          await page.getByTestId('not-submitted').textContent(),
          'Countersign did not send it to the XRP Ledger: Example Shop may submit it.',
        )
        assert.equal(await page.getByTestId('explorer-link').count(), 0)
        await shoot(page, 'signing-signed.png')
      }
    })
  }

  it('leads a payment with what may leave the account, and says what an account deletion or a new key does', async () => {
    const usd = { currency: 'USD', issuer: DESTINATION, value: '0.000001' }
    const swap = await create({ type: 'sign', transaction: { ...paymentTransaction(usd), SendMax: '1000000000', Flags: 0x00020000 } })
    const { page } = await open(swap)
    assert.equal(await page.getByTestId('payment-amount').textContent(), 'Up to 1,000 XRP')
    assert.equal(
      await page.getByTestId('payment-receives').textContent(),
      'They receive at most 0.000001 USD, and may receive as little as any amount (a partial payment)',
    )
    // What arrives keeps its issuer, which tells a look-alike token apart.
    assert.match((await page.locator('.payment .amount-details').textContent()) ?? '', new RegExp(`Issuer${DESTINATION}`))
    const deletion = await create({ type: 'sign', transaction: { TransactionType: 'AccountDelete', Destination: DESTINATION } })
    await page.goto(`${t.url}/sign/${deletion}`)
    assert.match((await page.getByTestId('consequence').textContent()) ?? '', /^This deletes the signing account: its whole XRP balance/)
    assert.match((await page.getByTestId('transaction-fee').textContent()) ?? '', /one owner reserve/)
    // An offer in its maker's terms: TakerGets is what the account gives.
    const offer = await create({
      type: 'sign',
      transaction: { TransactionType: 'OfferCreate', TakerGets: '100000000', TakerPays: { ...usd, value: '50' } },
    })
    await page.goto(`${t.url}/sign/${offer}`)
    assert.equal(await page.getByTestId('offer-amount').textContent(), 'Pay at most 100 XRP')
    assert.equal(await page.getByTestId('offer-receives').textContent(), 'To receive 50 USD')
    assert.match((await page.getByTestId('offer-remainder').textContent()) ?? '', /stays on the order book/)
    assert.equal(await page.getByTestId('tx-field-TakerGets').count(), 0, 'said once, in the headline')
    await shoot(page, 'signing-offer.png')
  })

  it('on mainnet without Xaman, tells a phone that the wallets offered work on a computer only', async () => {
    const mainnet = await startTestService('sqlite', { listen: true, env: { XRPL_NETWORK: 'mainnet' } })
    try {
      const project = await mainnet.createProject('pro')
      const uuid = await createPayload(mainnet, project.apiKey, { type: 'signMessage', message: 'Hello' })
      const context = await browser.newContext({ viewport: PHONE })
      const page = await context.newPage()
      await page.goto(`${mainnet.url}/sign/${uuid}`)
      const note = page.getByTestId('computer-only')
      await note.waitFor()
      assert.equal(
        await note.textContent(),
        'These wallets work in a browser on a computer, not on a phone: open this page on a computer to approve.',
      )
      await page.setViewportSize(LAPTOP)
      await note.waitFor({ state: 'hidden' })
      await context.close()
    } finally {
      await mainnet.stop()
    }
  })

  it('says a message is long, and that it scrolls, before its end is out of sight; a short one says nothing', async () => {
    const long = `${'I agree to the terms. '.repeat(100)}END`
    const { page } = await open(await create({ type: 'signMessage', message: long }))
    assert.equal(
      await page.getByTestId('message-length').textContent(),
      'This message is long (2,203 characters): scroll inside its box to read it all before you approve.',
    )
    await page.goto(`${t.url}/sign/${await create({ type: 'signMessage', message: 'Short and sweet.' })}`)
    await page.getByTestId('message').waitFor()
    assert.equal(await page.getByTestId('message-length').count(), 0)
  })

  it('a submitted transaction that fails on the ledger (tec) ends as a failure, in the headline and the title, not as a success', async () => {
    const uuid = await create({ type: 'signAndSubmit', transaction: paymentTransaction('1000000') })
    const { page } = await open(uuid)
    await chooseDeveloperWallet(page)
    await page.getByTestId('approve').click()
    await outcome(page, 'signed')
    const hash = (await page.getByTestId('tx-hash').textContent()) ?? ''
    rippled.setTransaction(hash, { validated: true, ledgerIndex: 1006, transactionResult: 'tecUNFUNDED_PAYMENT' })
    t.clock.advance(FOLLOW_INTERVAL_MS)
    await page.getByTestId('final-result').filter({ hasText: 'Final result: it failed (tecUNFUNDED_PAYMENT' }).waitFor({ timeout: 30_000 })
    assert.equal(await page.getByTestId('status').textContent(), 'The transaction failed on the XRP Ledger')
    assert.match((await page.getByTestId('outcome').getAttribute('class')) ?? '', /\boutcome-failed\b/)
    assert.equal(await page.title(), 'The transaction failed on the XRP Ledger · \u2068Example Shop\u2069')
  })

  it('says who asks at a glance: display name, verified website, logo; the title names the project and the action', async () => {
    const uuid = await create({ type: 'sign', transaction: { ...paymentTransaction('2500000'), DestinationTag: 7 } })
    const { page } = await open(uuid)
    assert.equal(await page.getByTestId('project-name').textContent(), 'Example Shop')
    assert.match((await page.getByTestId('project-website').textContent()) ?? '', /^shop\.example\s*verified website$/)
    // The host may break after a dot only: each label is kept on one line.
    assert.deepEqual(await page.locator('.origin-host .host-label').allTextContents(), ['shop.', 'example'])
    assert.equal(
      await page
        .locator('.origin-host .host-label')
        .first()
        .evaluate((e) => getComputedStyle(e).whiteSpace),
      'nowrap',
    )
    const logo = page.getByTestId('project-logo')
    assert.match((await logo.getAttribute('src')) ?? '', new RegExp(`^/logos/${projectId}/[0-9a-f]{64}$`))
    // decode() waits for the image to load (a busy machine may still be fetching it), and rejects if it cannot.
    assert.ok(
      await logo.evaluate((image: HTMLImageElement) =>
        image.decode().then(
          () => image.naturalWidth === 48,
          () => false,
        ),
      ),
      'the logo loaded',
    )
    assert.equal(await page.title(), 'Sign a transaction · \u2068Example Shop\u2069')
    assert.equal(await page.locator('link[rel="icon"]').getAttribute('href'), '/assets/favicon.svg')
    assert.equal((await fetch(`${t.url}/assets/favicon.svg`)).status, 200)

    // What is signed: the amount with its asset, the destination (grouped, copied whole) and its tag, fee, account, network.
    const summary = page.getByTestId('summary')
    assert.match(await summary.innerText(), /To\s+rPT1\s*Sjq2\s*YGrB/)
    assert.equal(await page.getByTestId('payment-destination').textContent(), paymentTransaction().Destination)
    assert.match(await summary.innerText(), /Destination tag\s+7/)
    assert.match(await summary.innerText(), /Fee\s+Set by your wallet/)
    assert.match(await summary.innerText(), /From\s+The account you approve with/)
    assert.match(await summary.innerText(), /Network\s+XRP Ledger testnet/)

    // A Ledger is found only when approving: the picker cannot call it ready, and says what the person will do.
    const ledgerNote = page.getByTestId('wallet-ledger').locator('.wallet-note')
    await ledgerNote.filter({ hasNotText: 'Checking…' }).waitFor({ state: 'attached' })
    assert.equal(await ledgerNote.textContent(), 'Connect it and open its XRP app when asked')
    assert.equal(await page.getByTestId('wallet-developer').locator('.wallet-note').textContent(), 'Ready')
  })

  it('on a phone, keeps the primary action in reach and folds desktop-only wallets under "Other wallets"', async () => {
    const uuid = await create({
      type: 'sign',
      transaction: { ...paymentTransaction(), Memos: [{ Memo: { MemoData: '48656C6C6F' } }] },
      options: { customInstructions: 'A long note.\n'.repeat(12) },
    })
    const { page } = await open(uuid)
    await settled(page)
    const others = page.getByTestId('other-wallets')
    assert.equal(await others.getAttribute('open'), null, 'folded')
    assert.equal(await page.getByTestId('wallet-gemwallet').isVisible(), false)
    assert.equal(await page.getByTestId('wallet-developer').isVisible(), true)
    const approve = await page.getByTestId('approve').boundingBox()
    assert.ok(
      approve !== null && approve.y + approve.height <= PHONE.height,
      `Approve is on screen without scrolling: ${JSON.stringify(approve)}`,
    )
    assert.ok(await page.getByTestId('approve').isDisabled(), 'disabled until a wallet is chosen')
    const look = await page
      .getByTestId('approve')
      .evaluate((button) => [getComputedStyle(button).backgroundColor, getComputedStyle(button).borderStyle])
    assert.deepEqual(look[1], 'dashed', `a disabled button looks disabled: ${look.join(' ')}`)
    await others.locator('summary').click()
    assert.equal(await page.getByTestId('wallet-gemwallet').isVisible(), true)
    await shoot(page, 'signing-phone-other-wallets.png')
  })

  it('after a signAndSubmit, shows the hash with a copy button and an explorer link, then the final result', async () => {
    const uuid = await create({ type: 'signAndSubmit', transaction: paymentTransaction('1000000') })
    const { page, context } = await open(uuid)
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url })
    await chooseDeveloperWallet(page)
    await page.getByTestId('approve').click()
    await outcome(page, 'signed')
    assert.equal(await page.getByTestId('status').textContent(), 'The transaction was signed and submitted')
    const hash = (await page.getByTestId('tx-hash').textContent()) ?? ''
    assert.match(hash, /^[0-9A-F]{64}$/)
    await page.getByTestId('copy-tx-hash').click()
    await page.getByTestId('copy-tx-hash').filter({ hasText: 'Copied' }).waitFor()
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), hash)
    await page.getByTestId('explorer-link').waitFor()
    assert.equal(await page.getByTestId('explorer-link').getAttribute('href'), `https://testnet.xrpl.org/transactions/${hash}`)
    assert.match((await page.getByTestId('final-result').textContent()) ?? '', /Waiting for the XRP Ledger to validate it/)
    // The wallet's account and fee, now known, fill the summary kept on the page.
    await page.getByTestId('account-address').waitFor()

    rippled.setTransaction(hash, { validated: true, ledgerIndex: 1005, transactionResult: 'tesSUCCESS' })
    // The follower asks the node again FOLLOW_INTERVAL_MS after its last look, on the service's (manual) clock.
    t.clock.advance(FOLLOW_INTERVAL_MS)
    await page
      .getByTestId('final-result')
      .filter({ hasText: 'Final result: it succeeded (tesSUCCESS, ledger 1005)' })
      .waitFor({ timeout: 30_000 }) // the follower's worker polls once a second, the page asks every 2 s
    assert.equal(await page.title(), 'The transaction was signed and submitted · \u2068Example Shop\u2069')
    await shoot(page, 'signing-submitted.png')
  })

  it('when the ledger holds the same transaction signed otherwise, shows its hash and explorer link, and says why', async () => {
    const uuid = await create({ type: 'signAndSubmit', transaction: paymentTransaction('1000000') })
    const payer = Wallet.generate()
    const signed = signRequested(payer, paymentTransaction('1000000'))
    const approval = await t.inject({
      method: 'POST',
      url: `/api/v1/sign/${uuid}/approve`,
      payload: { walletAdapter: 'gemwallet', signedTransaction: signed.tx_blob },
    })
    assert.equal(approval.statusCode, 200, approval.body)
    // The wallet submitted its own copy, signed with the account's regular key, and the ledger applied that one.
    const copy = signRequested(Wallet.generate(), paymentTransaction('1000000'), { Account: payer.classicAddress })
    const usedIn = WALLET_FIELDS.LastLedgerSequence - 5
    rippled.setAccount(payer.classicAddress, { sequence: WALLET_FIELDS.Sequence }, { fromLedger: 1 })
    rippled.setAccount(payer.classicAddress, { sequence: WALLET_FIELDS.Sequence + 1 }, { fromLedger: usedIn })
    rippled.setTransaction(copy.hash, { validated: true, ledgerIndex: usedIn, transactionResult: 'tesSUCCESS', txBlob: copy.tx_blob })
    rippled.setValidatedLedgerIndex(WALLET_FIELDS.LastLedgerSequence + SETTLED_LEDGERS)
    try {
      await t.service.ctx.follower.followDue()
      assert.equal((await appView(uuid)).submission.outcome, 'succeeded')
    } finally {
      rippled.setValidatedLedgerIndex(1000)
    }
    const { page } = await open(uuid)
    await outcome(page, 'signed')
    assert.equal(await page.getByTestId('tx-hash').textContent(), copy.hash)
    assert.equal(await page.getByTestId('explorer-link').getAttribute('href'), `https://testnet.xrpl.org/transactions/${copy.hash}`)
    assert.match((await page.getByTestId('signed-otherwise').textContent()) ?? '', /same transaction signed otherwise/)
    assert.match((await page.getByTestId('final-result').textContent()) ?? '', /it succeeded \(tesSUCCESS, ledger 1015\)/)
    await shoot(page, 'signing-signed-otherwise.png')
  })

  it('a transaction the node holds to apply later says it may be on its way, not that the request was answered', async () => {
    const uuid = await create({ type: 'signAndSubmit', transaction: paymentTransaction('1000000') })
    // Open on the same request already: another tab, or the phone.
    const before = await open(uuid)
    const { page } = await open(uuid)
    const address = await chooseDeveloperWallet(page)
    rippled.setSubmitResult('terPRE_SEQ')
    try {
      await page.getByTestId('approve').click()
      const problem = page.getByTestId('error')
      await inDoubt(page).waitFor({ timeout: 10_000 })
      assert.match((await problem.textContent()) ?? '', /do not sign again/)
      assert.equal(await problem.getAttribute('data-tone'), 'caution', 'nothing failed: styled as a caution, not an error')
      // On a phone the page scrolls to it (at once: no smooth scrolling), and the sticky action bar does not cover its title.
      const title = await problem.locator('strong').boundingBox()
      const actions = await page.getByTestId('actions').boundingBox()
      assert.ok(title !== null && actions !== null)
      assert.ok(title.y >= 0 && title.y + title.height <= actions.y, `title at ${title.y}-${title.y + title.height}, bar from ${actions.y}`)
      // Nothing to sign again, nor to reject, until the ledger decides.
      assert.equal(await page.getByTestId('status').textContent(), 'Waiting for the XRP Ledger')
      assert.ok(await page.getByTestId('approve').isDisabled(), 'no second signature is offered')
      assert.ok(await page.getByTestId('reject').isDisabled())
    } finally {
      rippled.setSubmitResult('tesSUCCESS')
    }
    assert.equal((await appView(uuid)).status, 'pending')
    await shoot(page, 'signing-in-doubt.png')

    // The page open before hears of it from its live stream; the same link opened now says so at once. Neither offers
    // anything to press.
    const again = await open(uuid)
    for (const other of [page, before.page, again.page]) {
      await inDoubt(other).waitFor({ timeout: 10_000 })
      assert.equal(await other.getByTestId('status').textContent(), 'Waiting for the XRP Ledger')
      assert.equal(await other.getByTestId('countdown').isVisible(), false, 'no time to count down: the ledger decides')
      assert.ok(await other.getByTestId('reject').isDisabled())
      assert.ok(await other.getByTestId('wallet-developer').isDisabled(), 'no wallet to choose')
    }

    // The account's Sequence is used by another transaction (the developer wallet sets no LastLedgerSequence): the
    // ledger can never apply this one, the service releases it, and every page, told by its live stream, offers the
    // request again.
    // Sequence 1 was unused until ledger 990, which holds the other transaction.
    rippled.setAccount(address, { sequence: 1 }, { fromLedger: 1 })
    rippled.setAccount(address, { sequence: 2 }, { fromLedger: 990 })
    t.clock.advance(61_000) // past the submission's lease
    await t.service.ctx.signing.submissions.recoverLapsed()
    for (const on of [page, before.page, again.page]) {
      await on.getByTestId('status').filter({ hasText: 'The transaction did not reach the ledger: you can approve again' }).waitFor()
      assert.equal(await on.getByTestId('error').isVisible(), false)
      assert.ok(await on.getByTestId('reject').isEnabled())
      assert.ok(await on.getByTestId('countdown').isVisible(), 'the time left to approve again')
    }
    await page.getByTestId('reject').click()
    await outcome(page, 'rejected')
    await outcome(again.page, 'rejected')
  })

  it('a node that never answered leaves the request in doubt: after the 502 the page waits instead of asking to sign again', async () => {
    const uuid = await create({ type: 'signAndSubmit', transaction: paymentTransaction('1000000') })
    const { page } = await open(uuid)
    await chooseDeveloperWallet(page)
    // The node takes the blob and goes down before answering.
    const submits = () => rippled.requests.filter((request) => request.command === 'submit').length
    const before = submits()
    rippled.hold('submit', true)
    try {
      await page.getByTestId('approve').click()
      while (submits() === before) await sleep(25)
      await rippled.stop()
    } finally {
      rippled.hold('submit', false)
    }
    try {
      await inDoubt(page).waitFor({ timeout: 15_000 })
      assert.equal(await page.getByTestId('status').textContent(), 'Waiting for the XRP Ledger')
      assert.ok(await page.getByTestId('approve').isDisabled(), 'no second signature is offered')
    } finally {
      await rippled.start()
    }
  })

  it('a countdown that ends while a submission is in doubt, unheard of, asks the service and waits for the ledger', async () => {
    const uuid = await create({ type: 'signAndSubmit', transaction: paymentTransaction('1000000') })
    const context = await browser.newContext({ viewport: VIEWPORT })
    const page = await context.newPage()
    // The page's timers and clock are the test's; its live stream fails, and its polls go unanswered until let through.
    await page.clock.install()
    let answering = true
    await page.route('**/api/v1/sign/*/events', (route) => route.abort())
    await page.route(`**/api/v1/sign/${uuid}`, (route) => (answering ? route.continue() : route.abort()))
    await page.goto(`${t.url}/sign/${uuid}`)
    await page.getByTestId('project-name').waitFor()
    answering = false
    // Another device's approval is held by the node (terPRE_SEQ): in doubt, and this page has not heard.
    await approveElsewhereInDoubt(uuid)
    answering = true
    await page.clock.fastForward('05:01')
    await inDoubt(page).waitFor({ timeout: 10_000 })
    assert.equal(await page.getByTestId('outcome').count(), 0, 'not shown as expired: the ledger may still take it')
    await context.close()
  })

  it('a countdown that ends while the service refuses to answer (429) asks again, and does not call an in-doubt request expired', async () => {
    const uuid = await create({ type: 'signAndSubmit', transaction: paymentTransaction('1000000') })
    const context = await browser.newContext({ viewport: VIEWPORT })
    const page = await context.newPage()
    await page.clock.install()
    let refusing = false
    await page.route('**/api/v1/sign/*/events', (route) => route.abort())
    await page.route(`**/api/v1/sign/${uuid}`, (route) =>
      refusing
        ? route.fulfill({ status: 429, contentType: 'application/json', body: JSON.stringify({ error: 'Too many requests' }) })
        : route.continue(),
    )
    await page.goto(`${t.url}/sign/${uuid}`)
    await page.getByTestId('project-name').waitFor()
    refusing = true
    // Another device's approval is held by the node (terPRE_SEQ): in doubt, and this page has not heard.
    await approveElsewhereInDoubt(uuid)
    await page.clock.fastForward('05:01')
    await page.clock.fastForward('00:02')
    assert.equal(await page.getByTestId('outcome').count(), 0, 'refused: not called expired')
    refusing = false
    await page.clock.fastForward('00:06')
    await inDoubt(page).waitFor({ timeout: 10_000 })
    assert.equal(await page.getByTestId('outcome').count(), 0, 'asked again: in doubt, the ledger may still take it')
    await context.close()
  })

  it('a poll answered from before its own approval’s answer does not end the doubt that answer began (the polling fallback)', async () => {
    const uuid = await create({ type: 'signAndSubmit', transaction: paymentTransaction('1000000') })
    const context = await browser.newContext({ viewport: VIEWPORT })
    const page = await context.newPage()
    await page.route('**/api/v1/sign/*/events', (route) => route.abort())
    // One poll is answered with the request as it stood when the poll was sent, but only once let through; the poll
    // after it waits while the test looks at the page.
    let mode: 'through' | 'stale' | 'hold' = 'through'
    const signal = () => {
      let resolve!: () => void
      const promise = new Promise<void>((done) => {
        resolve = done
      })
      return { promise, resolve }
    }
    const staleTaken = signal()
    const staleLetThrough = signal()
    const nextPollSent = signal()
    const nextPollLetThrough = signal()
    await page.route(`**/api/v1/sign/${uuid}`, async (route) => {
      if (mode === 'stale') {
        mode = 'through'
        const response = await route.fetch()
        staleTaken.resolve()
        await staleLetThrough.promise
        mode = 'hold'
        await route.fulfill({ response })
        return
      }
      if (mode === 'hold') {
        mode = 'through'
        nextPollSent.resolve()
        await nextPollLetThrough.promise
      }
      await route.continue()
    })
    await page.goto(`${t.url}/sign/${uuid}`)
    await page.getByTestId('project-name').waitFor()
    await chooseDeveloperWallet(page)
    mode = 'stale'
    await staleTaken.promise
    // The node holds the blob (terPRE_SEQ): the page's own approval is answered 409, in doubt.
    rippled.setSubmitResult('terPRE_SEQ')
    try {
      await page.getByTestId('approve').click()
      await inDoubt(page).waitFor({ timeout: 10_000 })
    } finally {
      rippled.setSubmitResult('tesSUCCESS')
    }
    staleLetThrough.resolve()
    await nextPollSent.promise
    try {
      // The stale answer (pending, no doubt) has been read: the next poll is only sent after it.
      assert.equal(await page.getByTestId('status').textContent(), 'Waiting for the XRP Ledger', 'still in doubt')
      assert.ok(await page.getByTestId('approve').isDisabled(), 'no second signature is offered')
    } finally {
      nextPollLetThrough.resolve()
      await context.close()
    }
  })

  it('rejecting resolves the request as rejected, with the wallet that was chosen', async () => {
    const uuid = await create({ type: 'signMessage', message: 'Transfer the domain example.com to account 7.' })
    const { page } = await open(uuid)
    await chooseDeveloperWallet(page)
    await page.getByTestId('reject').click()
    await outcome(page, 'rejected')
    await shoot(page, 'signing-rejected.png')
    const view = await appView(uuid)
    assert.equal(view.status, 'rejected')
    assert.equal(view.walletAdapter, 'developer')
  })

  it('a multisigned request shows the quorum, takes each signer in turn, and resolves at quorum', async () => {
    const account = Wallet.generate()
    const signers = [Wallet.generate(), Wallet.generate(), Wallet.generate()] as const
    rippled.setAccount(account.classicAddress, {
      signerList: { quorum: 2, entries: signers.map((signer) => ({ account: signer.classicAddress, weight: 1 })) },
    })
    const uuid = await create({
      type: 'sign',
      transaction: { ...paymentTransaction(), Account: account.classicAddress },
      options: { multisign: true },
    })
    const { page } = await open(uuid)
    assert.equal(await page.getByTestId('multisign-weight').textContent(), '0 of 2 signed')
    assert.equal(await page.getByTestId('wallet-gemwallet').count(), 0, 'only wallets that sign for multisigning are offered')
    await page.getByTestId('wallet-developer').click()
    await page.getByTestId('dev-seed').fill(signers[0].seed as string)
    await page.getByTestId('approve').click()
    await page.getByTestId('status').filter({ hasText: 'waiting for the other signers' }).waitFor({ timeout: 10_000 })
    assert.equal(await page.getByTestId('multisign-weight').textContent(), '1 of 2 signed')
    // The page stays for the next signer, maybe at this computer: the first one's key is not left in it.
    assert.equal(await page.getByTestId('dev-seed').inputValue(), '')
    assert.equal(await page.getByTestId('dev-address').textContent(), 'No key yet: the next signer enters theirs')
    assert.match((await page.getByTestId('multisign-rule').textContent()) ?? '', /A rejection is one signer’s/)
    // "Reject as" has a row of its own above the two buttons, which stay side by side (Reject had dropped below Approve).
    const box = async (testId: string) => (await page.getByTestId(testId).boundingBox()) ?? { x: 0, y: 0, width: 0, height: 0 }
    const [choice, approve, reject] = [await box('reject-as'), await box('approve'), await box('reject')]
    assert.ok(choice.y + choice.height <= approve.y, 'the choice above the buttons')
    assert.equal(Math.round(approve.y), Math.round(reject.y), 'Approve and Reject on one row')
    await shoot(page, 'signing-multisign.png')
    await page.getByTestId('dev-seed').fill(signers[1].seed as string)
    await page.getByTestId('approve').click()
    await outcome(page, 'signed')
    const view = await appView(uuid)
    assert.equal(view.status, 'signed')
    assert.equal(view.signerAddress, account.classicAddress)
    assert.equal(view.multisign.weight, 2)
  })

  it('shows expiry without a reload once the time is up (the sweeper expires it, the page learns of it)', async () => {
    const uuid = await create({ type: 'sign', transaction: paymentTransaction(), options: { expiresIn: 60 } })
    const { page } = await open(uuid)
    assert.match((await page.getByTestId('countdown').textContent()) ?? '', /Expires in/)
    t.clock.advance(61_000)
    await outcome(page, 'expired')
    await shoot(page, 'signing-expired.png')
    assert.equal((await appView(uuid)).status, 'expired')
  })

  it('after approving, follows the return URL with its placeholders filled', async () => {
    const uuid = await create({ type: 'connect', options: { returnUrl: `${t.url}/healthz?payload={uuid}&tx={txHash}` } })
    const { page } = await open(uuid)
    await chooseDeveloperWallet(page)
    await page.getByTestId('approve').click()
    await outcome(page, 'signed')
    assert.equal(await page.getByTestId('redirect-link').textContent(), 'Back to Example Shop')
    assert.equal(await page.getByTestId('redirect-host').textContent(), `It opens ${new URL(t.url).host}.`)
    await page.waitForURL(/\/healthz\?/, { timeout: 10_000 })
    assert.equal(page.url(), `${t.url}/healthz?payload=${uuid}&tx=`)
  })

  it('"Stay on this page" keeps the outcome on screen; "Back to <project>" returns when the person chooses', async () => {
    const uuid = await create({ type: 'signMessage', message: 'Hello', options: { returnUrl: `${t.url}/healthz?payload={uuid}` } })
    const { page } = await open(uuid)
    await chooseDeveloperWallet(page)
    await page.getByTestId('approve').click()
    await outcome(page, 'signed')
    await page.getByTestId('stay').click()
    await page.waitForTimeout(6000)
    assert.match(page.url(), /\/sign\//, 'still on the signing page')
    await page.getByTestId('redirect-link').click()
    await page.waitForURL(/\/healthz\?/)
  })

  it('renders hostile customInstructions as inert text', async () => {
    const uuid = await create({ type: 'sign', transaction: paymentTransaction(), options: { customInstructions: HOSTILE } })
    const { page } = await open(uuid)
    const instructions = page.getByTestId('custom-instructions')
    assert.equal(await instructions.textContent(), HOSTILE)
    assert.ok(await instructions.isVisible())
    assert.equal(await instructions.locator('img, script').count(), 0)
    await page.waitForTimeout(300)
    assert.equal(await page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss), undefined)
    await shoot(page, 'signing-hostile.png')
  })

  it('says which account to sign with when the request names its signers', async () => {
    const signers = ['rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe', 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh']
    const uuid = await create({ type: 'connect', options: { signers } })
    const { page } = await open(uuid)
    const text = (await page.getByTestId('signers').textContent()) ?? ''
    assert.match(text, /Sign with one of these accounts/)
    for (const signer of signers) assert.ok(text.includes(signer), signer)
  })

  it('an unknown uuid still gets the page, which says the request does not exist', async () => {
    const { page } = await open('00000000-0000-4000-8000-000000000000')
    assert.match((await page.getByTestId('error').textContent()) ?? '', /does not exist/)
  })

  it('first load weighs little, and no page broke its Content-Security-Policy or threw', async (context) => {
    const uuid = await create({ type: 'sign', transaction: paymentTransaction() })
    const { page, transferred } = await open(uuid)
    await page.waitForLoadState('networkidle')
    await settled(page)
    const total = [...transferred.values()].reduce((sum, bytes) => sum + bytes, 0)
    const gzipped = await gzippedBytes([...transferred.keys()])
    context.diagnostic(`first load: ${transferred.size} responses, ${total} bytes transferred; ${gzipped} bytes if gzipped`)
    for (const [url, bytes] of transferred) context.diagnostic(`  ${bytes} ${new URL(url).pathname}`)
    assert.ok(total < FIRST_LOAD_BUDGET_BYTES, `${total} bytes is over the budget of ${FIRST_LOAD_BUDGET_BYTES}`)
    for (const { problems } of opened) assert.deepEqual(problems, [])
  })

  it('axe-core found no accessibility problem of any impact, and no state scrolls sideways, at a phone or a laptop width', () => {
    assert.ok(opened.length >= 8, 'the states were checked')
    assert.deepEqual(violations, [])
  })
})
