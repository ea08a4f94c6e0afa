// The signing page (the signingUrl, /sign/{uuid}): shows what is asked, lets the user approve with a wallet or reject,
// and follows the request's status live. Everything comes from the wallet-facing API; the HTML shell holds no payload data.

import type { PayloadType } from '../../features/payloads/model.js'
import { type Clock, systemClock } from '../../platform/clock.js'
import { ApiError } from '../shared/api-client.js'
import { copyButton, grouped } from '../shared/copy.js'
import { button, type Child, h, isolated, replaceChildren } from '../shared/dom.js'
import { approveSignRequest, fetchSignRequest, type Resolution, rejectSignRequest, type SignRequest } from './api.js'
import { expiredHeadline, formatRemaining } from './format.js'
import { httpUrl } from './http-url.js'
import { MultisignProgress } from './multisign-progress.js'
import { renderPhoneQr } from './phone-qr.js'
import { describeFailure } from './problems.js'
import { copyableAddress, renderAsker, renderRequest } from './request-view.js'
import { type Watcher, watchSignRequest } from './status-watch.js'
import { walletsFor } from './wallets/index.js'
import type { Availability, WalletAdapter } from './wallets/types.js'

const POLL_INTERVAL_MS = 2000
/** Long enough to read the outcome (or to choose to stay) before the app takes over. */
const REDIRECT_DELAY_MS = 5000
/** How long the page keeps asking for the final result of a submitted transaction (the service follows it 10 minutes). */
const FINAL_RESULT_WAIT_MS = 10 * 60_000
/** Narrower than this, the page is on a phone: desktop-only wallets fold away and the actions stay in reach. */
const PHONE_QUERY = '(max-width: 47.99rem)'
/** Beyond this gap the server's clock (its Date header) is trusted over the device's for the countdown. */
const CLOCK_SKEW_THRESHOLD_MS = 5000

/** What happened, in the past tense. */
const SIGNED_HEADLINES: Record<PayloadType, string> = {
  connect: 'Your wallet was connected',
  sign: 'The transaction was signed',
  signAndSubmit: 'The transaction was signed and submitted',
  signMessage: 'The message was signed',
}

const TITLE_ACTIONS: Record<PayloadType, string> = {
  connect: 'Connect your wallet',
  sign: 'Sign a transaction',
  signAndSubmit: 'Sign and submit a transaction',
  signMessage: 'Sign a message',
}

interface WalletChoice {
  adapter: WalletAdapter
  availability: Availability | undefined
  item: HTMLButtonElement
  note: HTMLElement
}

void main()

async function main(): Promise<void> {
  const root = document.getElementById('app')
  if (root === null) return
  const uuid = /^\/sign\/([^/]+)\/?$/.exec(location.pathname)?.[1]
  if (uuid === undefined) {
    showProblemPage(root, 'This is not a signing link', 'Check the link you were given.')
    return
  }
  try {
    const { request, serverDateMs } = await fetchSignRequest(decodeURIComponent(uuid))
    new SigningPage(root, request, clockFollowing(serverDateMs)).start()
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      showProblemPage(root, 'This signing request does not exist', 'The link may be mistyped, or the request was removed.')
    } else {
      showProblemPage(root, 'The request could not be loaded', `${messageOf(error)}. Reload the page to try again.`)
    }
  }
}

class SigningPage {
  private readonly expiresAtMs: number
  private readonly choices: WalletChoice[]
  private chosen: WalletChoice | undefined
  private busy = false
  /** An approve or reject call is on its way: its answer, not the status watcher, settles the page. */
  private posting = false
  private settled = false
  /** The wallet whose own servers the service is waiting on (Xaman): approving with it again would start over. */
  private awaitingService: WalletChoice | undefined
  private watcher: Watcher | undefined
  private countdownTimer: ReturnType<typeof setInterval> | undefined
  private readonly status = h('p', { className: 'status', testId: 'status', attrs: { role: 'status' } }, 'Waiting for your approval')
  private readonly countdown = h('p', { className: 'countdown', testId: 'countdown', attrs: { role: 'timer' } })
  private readonly problem = h('div', { className: 'problem', testId: 'error', attrs: { role: 'alert', hidden: '' } })
  private readonly panel = h('div', { className: 'wallet-panel', testId: 'wallet-panel' })
  private readonly approveButton = button('Approve', { className: 'primary', testId: 'approve' }, () => void this.approve())
  private readonly rejectButton = button('Reject', { className: 'secondary', testId: 'reject' }, () => void this.reject())
  /** A multisigned request: the quorum's progress, and which signer a rejection is for. */
  private readonly multisign: MultisignProgress | undefined

  constructor(
    private readonly root: HTMLElement,
    private request: SignRequest,
    private readonly clock: Clock,
  ) {
    this.expiresAtMs = Date.parse(request.expiresAt)
    this.multisign = request.multisign === undefined ? undefined : new MultisignProgress(request.multisign)
    this.choices = walletsFor(request).map((adapter) => {
      const note = h('span', { className: 'wallet-note' }, 'Checking…')
      const item = h('button', {
        className: 'wallet checking',
        testId: `wallet-${adapter.id}`,
        attrs: { type: 'button', 'aria-pressed': 'false' },
      })
      item.append(h('span', { className: 'wallet-label' }, adapter.label), note)
      const choice: WalletChoice = { adapter, availability: undefined, item, note }
      item.addEventListener('click', () => this.choose(choice))
      return choice
    })
  }

  start(): void {
    // FIRST STRONG ISOLATE ... POP DIRECTIONAL ISOLATE around the project's name: a title cannot hold a <bdi>.
    document.title = `${TITLE_ACTIONS[this.request.type]} · \u2068${this.request.project.name}\u2069`
    if (this.request.status !== 'pending') {
      this.settle(this.request)
      return
    }
    // On a phone, browser extensions and WebHID cannot work: those wallets fold away under "Other wallets", so that
    // the ones that can come first and the actions stay close. On a wider screen the fold stays open, its summary hidden.
    let first = this.choices.filter((choice) => !choice.adapter.desktopOnly)
    let others = this.choices.filter((choice) => choice.adapter.desktopOnly)
    if (first.length === 0) [first, others] = [others, []]
    const otherWallets =
      others.length > 0
        ? h(
            'details',
            { className: 'other-wallets', testId: 'other-wallets' },
            h('summary', {}, 'Other wallets (on a computer)'),
            h('div', { className: 'wallet-list' }, ...others.map((choice) => choice.item)),
          )
        : null
    if (otherWallets !== null) {
      const phone = window.matchMedia(PHONE_QUERY)
      otherWallets.open = !phone.matches
      phone.addEventListener('change', () => {
        otherWallets.open = !phone.matches
      })
    }
    replaceChildren(
      this.root,
      renderAsker(this.request),
      renderPhoneQr(`${location.origin}${location.pathname}`),
      h('div', { className: 'state' }, this.status, this.countdown),
      renderRequest(this.request),
      this.multisign?.element,
      h(
        'section',
        { className: 'wallets', attrs: { 'aria-labelledby': 'wallets-heading' } },
        h('h2', { attrs: { id: 'wallets-heading' } }, 'Approve with'),
        this.choices.length > 0
          ? h('div', { className: 'wallet-list' }, ...first.map((choice) => choice.item))
          : h('p', { className: 'warning' }, 'No wallet this page knows can answer this kind of request.'),
        otherWallets,
        this.panel,
      ),
      this.problem,
      h('div', { className: 'actions', testId: 'actions' }, this.approveButton, this.multisign?.rejectAsField, this.rejectButton),
    )
    this.refreshControls()
    this.tick()
    this.countdownTimer = setInterval(() => this.tick(), 1000)
    this.watcher = watchSignRequest(this.request.uuid, (request) => this.onUpdate(request), POLL_INTERVAL_MS)
    for (const choice of this.choices) void this.detect(choice)
  }

  private async detect(choice: WalletChoice): Promise<void> {
    try {
      choice.availability = await choice.adapter.detect()
    } catch (error) {
      choice.availability = { available: false, reason: `${choice.adapter.label} could not be checked: ${messageOf(error)}` }
    }
    const { available, reason } = choice.availability
    choice.note.replaceChildren(available ? 'Ready' : (reason ?? 'Not available'))
    choice.item.classList.remove('checking')
    choice.item.classList.toggle('unavailable', !available)
    if (choice === this.chosen) this.showChoice()
    this.refreshControls()
  }

  private choose(choice: WalletChoice): void {
    if (this.busy || choice === this.chosen) return
    this.chosen = choice
    for (const other of this.choices) other.item.setAttribute('aria-pressed', String(other === choice))
    this.showChoice()
    this.hideProblem()
    this.refreshControls()
  }

  private showChoice(): void {
    const choice = this.chosen
    if (choice === undefined) return
    if (choice.availability?.available === false) {
      this.panel.replaceChildren(
        h('p', { className: 'warning', testId: 'wallet-unavailable' }, choice.availability.reason ?? 'Not available'),
      )
    } else if (choice.adapter.showPanel !== undefined) {
      choice.adapter.showPanel(this.panel, this.request)
    } else {
      this.panel.replaceChildren()
    }
  }

  private async approve(): Promise<void> {
    const choice = this.chosen
    if (choice === undefined || this.busy) return
    this.hideProblem()
    this.setBusy(true, `Waiting for ${choice.adapter.label}…`)
    try {
      const approval = await choice.adapter.approve(this.request)
      if (this.settled) return
      if (approval.kind === 'awaitingService') {
        this.awaitingService = choice
        this.setBusy(false, `Waiting for you to sign in ${approval.waitingFor}`)
        return
      }
      this.setBusy(true, 'Checking the signature…')
      this.finish(await this.post(() => approveSignRequest(this.request.uuid, approval.body)))
    } catch (error) {
      this.setBusy(false, 'Waiting for your approval')
      this.showFailure(error, choice.adapter.label)
    }
  }

  private async reject(): Promise<void> {
    if (this.busy) return
    this.hideProblem()
    this.setBusy(true, 'Rejecting…')
    try {
      const signerAccount = this.multisign?.rejectAs.value
      this.finish(await this.post(() => rejectSignRequest(this.request.uuid, this.chosen?.adapter.id, signerAccount)))
    } catch (error) {
      this.setBusy(false, 'Waiting for your approval')
      this.showFailure(error, undefined)
    }
  }

  private async post(call: () => Promise<Resolution>): Promise<Resolution> {
    this.posting = true
    try {
      return await call()
    } finally {
      this.posting = false
    }
  }

  private onUpdate(request: SignRequest): void {
    if (this.settled || this.posting) return
    this.request = request
    if (request.multisign !== undefined) this.multisign?.update(request.multisign)
    if (request.status !== 'pending') this.settle(request)
  }

  private tick(): void {
    const remainingMs = this.expiresAtMs - this.clock.now()
    if (remainingMs <= 0 && !this.posting) {
      this.settle({ ...this.request, status: 'expired' })
      return
    }
    this.countdown.replaceChildren(`Expires in ${formatRemaining(remainingMs)}`)
    this.countdown.classList.toggle('urgent', remainingMs <= 60_000)
  }

  /** Shows the answer of approve or reject, then the full outcome as the service now has it. */
  private finish(resolution: Resolution): void {
    if (this.settled) return
    if (resolution.status === 'pending') {
      // A multisigned request took this signer's answer; the page stays for the other signers.
      if (resolution.multisign !== undefined) this.multisign?.update(resolution.multisign)
      this.setBusy(false, 'Your answer is recorded: waiting for the other signers')
      return
    }
    const request: SignRequest = { ...this.request, ...resolution }
    this.showOutcome(request, resolution.status === 'rejected' ? 'You rejected this request' : undefined)
    void this.followOutcome(Date.now())
  }

  /** Shows a status learnt from the server (or the countdown), for a request no longer pending. */
  private settle(request: SignRequest): void {
    if (this.settled) return
    this.request = request
    this.showOutcome(request, undefined)
    if (request.status === 'signed') void this.followOutcome(Date.now())
  }

  /**
   * Fetches the outcome again: the account and fee the wallet set, the explorer link and, for signAndSubmit, the
   * final result once the ledger has validated the transaction (asked every 2 seconds until then).
   */
  private async followOutcome(startedMs: number): Promise<void> {
    for (;;) {
      try {
        const { request } = await fetchSignRequest(this.request.uuid)
        if (request.status === 'pending') return
        this.request = request
        if (this.outcomeDetails) replaceChildren(this.outcomeDetails, ...outcomeLines(request))
        if (this.outcomeSummary) replaceChildren(this.outcomeSummary, renderRequest(request))
        if (request.type !== 'signAndSubmit' || request.status !== 'signed' || request.submission?.validatedResult != null) return
      } catch {
        // The next round tries again.
      }
      if (Date.now() - startedMs > FINAL_RESULT_WAIT_MS) return
      await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS))
    }
  }

  private outcomeDetails: HTMLElement | undefined
  private outcomeSummary: HTMLElement | undefined

  private showOutcome(request: SignRequest, headlineOverride: string | undefined): void {
    const status = request.status
    if (status === 'pending') return
    this.settled = true
    this.watcher?.stop()
    clearInterval(this.countdownTimer)
    const headline =
      headlineOverride ??
      (status === 'signed'
        ? SIGNED_HEADLINES[request.type]
        : status === 'rejected'
          ? 'This request was rejected'
          : expiredHeadline(this.expiresAtMs, this.clock.now()))
    document.title = `${headline} · \u2068${request.project.name}\u2069`
    const redirect = request.redirectUrl === undefined ? null : httpUrl(request.redirectUrl, location.href)
    this.outcomeDetails = h('div', { className: 'outcome-details' }, ...outcomeLines(request))
    this.outcomeSummary = h('div', { className: 'outcome-summary' }, renderRequest(request))
    replaceChildren(
      this.root,
      renderAsker(request),
      h(
        'section',
        { className: `outcome outcome-${status}`, testId: 'outcome', attrs: { 'data-status': status } },
        h('h2', { testId: 'status' }, headline),
        this.outcomeDetails,
        redirect === null ? h('p', { className: 'hint' }, 'You can close this page.') : this.returnControls(redirect, request.project.name),
      ),
      h(
        'section',
        { className: 'asked', attrs: { 'aria-labelledby': 'asked-heading' } },
        h('h2', { className: 'asked-heading', attrs: { id: 'asked-heading' } }, status === 'signed' ? 'What was signed' : 'What was asked'),
        this.outcomeSummary,
      ),
    )
  }

  /** "Back to <project>" at once, or on its own after a few seconds unless the person chooses to stay. */
  private returnControls(redirect: string, projectName: string): HTMLElement {
    const note = h('p', { className: 'hint', testId: 'redirect-note' }, 'Returning you to ', isolated(projectName), ' in a few seconds.')
    const timer = setTimeout(() => location.assign(redirect), REDIRECT_DELAY_MS)
    const stay = button('Stay on this page', { className: 'secondary', testId: 'stay' }, () => {
      clearTimeout(timer)
      replaceChildren(note, 'You can go back to ', isolated(projectName), ' when you are ready.')
      stay.remove()
    })
    return h(
      'div',
      { className: 'return' },
      note,
      h(
        'div',
        { className: 'return-actions' },
        h(
          'a',
          { className: 'button-link primary', testId: 'redirect-link', attrs: { href: redirect, rel: 'noreferrer' } },
          'Back to ',
          isolated(projectName),
        ),
        stay,
      ),
    )
  }

  private showFailure(error: unknown, walletLabel: string | undefined): void {
    const problem = describeFailure(error, walletLabel)
    this.problem.dataset.kind = problem.kind
    replaceChildren(
      this.problem,
      h('strong', {}, problem.title),
      h('p', {}, problem.message),
      problem.details.length > 0 &&
        h(
          'ul',
          { testId: 'error-details' },
          ...problem.details.map((detail) => h('li', {}, h('code', {}, detail.field), `: ${detail.message}`)),
        ),
    )
    this.problem.hidden = false
    // The request was settled elsewhere meanwhile: fetch its status now rather than at the next poll.
    if (problem.kind === '409' || problem.kind === '410') void this.refresh()
  }

  private hideProblem(): void {
    this.problem.hidden = true
  }

  /** After a 409 or 410 the page fetches the real status once, without waiting for the watcher. */
  private async refresh(): Promise<void> {
    try {
      this.onUpdate((await fetchSignRequest(this.request.uuid)).request)
    } catch {
      // The watcher keeps trying.
    }
  }

  private setBusy(busy: boolean, statusText: string): void {
    this.busy = busy
    this.status.replaceChildren(statusText)
    this.status.classList.toggle('status-busy', busy)
    this.refreshControls()
  }

  private refreshControls(): void {
    const choice = this.chosen
    this.approveButton.replaceChildren(choice === undefined ? 'Approve' : `Approve with ${choice.adapter.label}`)
    this.approveButton.disabled = this.busy || choice?.availability?.available !== true || choice === this.awaitingService
    this.rejectButton.disabled = this.busy
    for (const other of this.choices) other.item.disabled = this.busy
  }
}

/** The facts of an outcome: who signed, the transaction hash with its explorer link, and the ledger's final word. */
function outcomeLines(request: SignRequest): Child[] {
  const explorer = request.explorerUrl === undefined ? null : httpUrl(request.explorerUrl, location.href, { httpsOnly: false })
  return [
    request.signerAddress !== undefined &&
      h(
        'div',
        { className: 'fact' },
        h('span', { className: 'fact-label' }, 'Signed by'),
        copyableAddress(request.signerAddress, 'signer-address', 'Copy the signing address'),
      ),
    request.txHash !== undefined &&
      h(
        'div',
        { className: 'fact' },
        h('span', { className: 'fact-label' }, 'Transaction hash'),
        h(
          'span',
          { className: 'copyable' },
          grouped(request.txHash, { className: 'hash', testId: 'tx-hash' }),
          copyButton(request.txHash, { accessibleName: 'Copy the transaction hash', testId: 'copy-tx-hash' }),
        ),
        explorer !== null &&
          h(
            'a',
            { className: 'explorer', testId: 'explorer-link', attrs: { href: explorer, rel: 'noreferrer noopener', target: '_blank' } },
            'See it on the XRP Ledger explorer',
          ),
      ),
    request.type === 'signAndSubmit' && request.status === 'signed' && finalResult(request),
  ]
}

/** signAndSubmit: what the ledger did with the transaction, once it is known. */
function finalResult(request: SignRequest): HTMLElement {
  const submission = request.submission
  const validated = submission?.validatedResult ?? null
  if (validated === null) {
    return h(
      'p',
      { className: 'final pending-final', testId: 'final-result', attrs: { role: 'status' } },
      'Waiting for the XRP Ledger to validate it',
      submission?.engineResult ? ` (submitted: ${submission.engineResult})` : '',
      '…',
    )
  }
  const succeeded = validated === 'tesSUCCESS'
  return h(
    'p',
    { className: succeeded ? 'final final-ok' : 'final final-bad', testId: 'final-result', attrs: { role: 'status' } },
    succeeded ? 'Final result: it succeeded' : 'Final result: it failed',
    ` (${validated}${submission?.ledgerIndex != null ? `, ledger ${submission.ledgerIndex}` : ''}).`,
    !succeeded && ' The fee was spent; nothing else changed.',
  )
}

function clockFollowing(serverDateMs: number | null): Clock {
  const offsetMs = serverDateMs === null ? 0 : serverDateMs - systemClock.now()
  return Math.abs(offsetMs) > CLOCK_SKEW_THRESHOLD_MS ? { now: () => systemClock.now() + offsetMs } : systemClock
}

function showProblemPage(root: HTMLElement, title: string, message: string): void {
  replaceChildren(root, h('section', { className: 'outcome outcome-problem', testId: 'error' }, h('h1', {}, title), h('p', {}, message)))
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
