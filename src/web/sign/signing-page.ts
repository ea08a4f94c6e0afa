// The signing page while the request is pending: what is asked, the wallets, Approve and Reject, and the status as it
// changes (the live watcher, the countdown); then the outcome (outcome-view.ts), from the answer or from the server.
import type { PayloadType } from '../../features/payloads/model.js'
import type { Clock } from '../../platform/clock.js'
import { ApiError } from '../shared/api-client.js'
import { button, h, replaceChildren } from '../shared/dom.js'
import { approveSignRequest, fetchSignRequest, type Resolution, rejectSignRequest, type SignRequest } from './api.js'
import { renderAsker } from './asker-view.js'
import { Countdown } from './countdown.js'
import { MultisignProgress } from './multisign-progress.js'
import { OutcomeView, outcomeHeadline } from './outcome-view.js'
import { renderPhoneQr } from './phone-qr.js'
import { describeFailure, type Problem, submissionInDoubt } from './problems.js'
import { renderRequest } from './request-view.js'
import { followOutcome, type Watcher, watchSignRequest } from './status-watch.js'
import { type WalletChoice, WalletPicker } from './wallet-picker.js'

const POLL_INTERVAL_MS = 2000
/** When the service could not say, at the countdown's zero, whether the request expired. */
const ASK_AGAIN_AT_TIME_UP_MS = 5000
const IN_DOUBT_STATUS = 'Waiting for the XRP Ledger'
/** How long the page keeps asking for the final result of a submitted transaction (the service follows it 10 minutes). */
const FINAL_RESULT_WAIT_MS = 10 * 60_000

const TITLE_ACTIONS: Record<PayloadType, string> = {
  connect: 'Connect your wallet',
  sign: 'Sign a transaction',
  signAndSubmit: 'Sign and submit a transaction',
  signMessage: 'Sign a message',
}

export class SigningPage {
  private readonly expiresAtMs: number
  private readonly wallets: WalletPicker
  private busy = false
  /** An approve or reject call is on its way: its answer, not the status watcher, settles the page. */
  private posting = false
  private settled = false
  /**
   * A signed transaction of this request's may be on its way to the ledger: approving and rejecting wait until the
   * service knows. The watcher tells of its end: the live stream sends the request when its submission is released.
   */
  private inDoubt = false
  /** When the last answer to this page's own approval or rejection arrived (performance.now()). */
  private answeredAtMs = Number.NEGATIVE_INFINITY
  /** The countdown reached zero and the page asked the service whether the request really expired. */
  private askedAtTimeUp = false
  /** The wallet whose own servers the service is waiting on (Xaman): approving with it again would start over. */
  private awaitingService: WalletChoice | undefined
  private watcher: Watcher | undefined
  private readonly countdown: Countdown
  private outcome: OutcomeView | undefined
  private readonly status = h('p', { className: 'status', testId: 'status', attrs: { role: 'status' } }, 'Waiting for your approval')
  private readonly problem = h('div', { className: 'problem', testId: 'error', attrs: { role: 'alert', hidden: '' } })
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
    this.countdown = new Countdown(this.expiresAtMs, clock, () => this.onTimeUp())
    this.wallets = new WalletPicker(request, {
      currentRequest: () => this.request,
      onChosen: () => {
        this.hideProblem()
        this.refreshControls()
      },
      onChecked: () => this.refreshControls(),
    })
  }

  start(): void {
    // FIRST STRONG ISOLATE ... POP DIRECTIONAL ISOLATE around the project's name: a title cannot hold a <bdi>.
    document.title = `${TITLE_ACTIONS[this.request.type]} · \u2068${this.request.project.name}\u2069`
    if (this.request.status !== 'pending') {
      this.settle(this.request)
      return
    }
    replaceChildren(
      this.root,
      renderAsker(this.request),
      renderPhoneQr(`${location.origin}${location.pathname}`),
      h('div', { className: 'state' }, this.status, this.countdown.element),
      renderRequest(this.request),
      this.multisign?.element,
      this.wallets.render(),
      this.problem,
      h('div', { className: 'actions', testId: 'actions' }, this.approveButton, this.multisign?.rejectAsField, this.rejectButton),
    )
    this.refreshControls()
    if (this.request.submissionInDoubt) this.enterDoubt(submissionInDoubt())
    this.countdown.start()
    this.watcher = watchSignRequest(this.request.uuid, (request, askedAtMs) => this.onUpdate(request, askedAtMs), POLL_INTERVAL_MS)
    this.wallets.detectAll()
  }

  private async approve(): Promise<void> {
    const choice = this.wallets.chosen
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
      this.finish(await this.post(() => rejectSignRequest(this.request.uuid, this.wallets.chosen?.adapter.id, signerAccount)))
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
      this.answeredAtMs = performance.now()
    }
  }

  /**
   * A state of the request learnt from the service. One asked for before this page's own answer arrived is older
   * than that answer (a poll sent before a 409 that began a doubt would end it), and changes nothing.
   */
  private onUpdate(request: SignRequest, askedAtMs: number): void {
    if (this.settled || this.posting || askedAtMs < this.answeredAtMs) return
    this.request = request
    if (request.multisign !== undefined) this.multisign?.update(request.multisign)
    if (request.status !== 'pending') this.settle(request)
    else if (request.submissionInDoubt) this.enterDoubt(submissionInDoubt())
    else if (this.inDoubt) this.leaveDoubt()
  }

  /**
   * The countdown reached zero: unless an answer is on its way or a submission is in doubt, the page asks the service
   * once, as a submission from another tab or device may have become in doubt meanwhile (the service then keeps the
   * request pending past its expiry until the ledger decides), and settles on its answer.
   */
  private onTimeUp(): boolean {
    if (this.posting || this.inDoubt || this.settled) return this.settled
    if (!this.askedAtTimeUp) {
      this.askedAtTimeUp = true
      void this.confirmExpiry()
    }
    return false
  }

  /**
   * The service's word on a request whose time is up: in doubt, it waits; resolved, the page shows how; pending (the
   * server's clock a little behind) or no answer, the page's own clock decides. A service that answered without an
   * answer (a rate limit, a failure of its own) is asked again a few seconds later: the request may be in doubt, or
   * signed on another device, and "expired" would be wrong.
   */
  private async confirmExpiry(): Promise<void> {
    let request: SignRequest | undefined
    const askedAtMs = performance.now()
    try {
      request = (await fetchSignRequest(this.request.uuid)).request
    } catch (error) {
      if (error instanceof ApiError && (error.status === 429 || error.status >= 500)) {
        setTimeout(() => {
          this.askedAtTimeUp = false
        }, ASK_AGAIN_AT_TIME_UP_MS)
        return
      }
      // Offline: the countdown's word stands.
    }
    if (this.settled) return
    if (this.posting) {
      // An answer on its way settles the page; should it fail, the countdown asks again.
      this.askedAtTimeUp = false
      return
    }
    if (request !== undefined && (request.status !== 'pending' || request.submissionInDoubt)) this.onUpdate(request, askedAtMs)
    else this.settle({ ...this.request, status: 'expired' })
  }

  /** Shows the answer of approve or reject, then the full outcome as the service now has it. */
  private finish(resolution: Resolution): void {
    if (this.settled) return
    if (resolution.status === 'pending') {
      // A multisigned request took this signer's answer; the page stays for the other signers.
      if (resolution.multisign !== undefined) this.multisign?.update(resolution.multisign)
      this.wallets.chosen?.adapter.answerRecorded?.()
      this.setBusy(false, 'Your answer is recorded: waiting for the other signers')
      return
    }
    const request: SignRequest = { ...this.request, ...resolution }
    this.showOutcome(request, resolution.status === 'rejected' ? 'You rejected this request' : undefined)
    void this.followOutcome()
  }

  /** Shows a status learnt from the server (or the countdown), for a request no longer pending. */
  private settle(request: SignRequest): void {
    if (this.settled) return
    this.request = request
    this.showOutcome(request, undefined)
    if (request.status === 'signed') void this.followOutcome()
  }

  /**
   * Fetches the outcome again: the account and fee the wallet set, the explorer link and, for signAndSubmit, the
   * final result once the ledger has validated the transaction (asked every 2 seconds until then).
   */
  private followOutcome(): Promise<void> {
    return followOutcome(
      this.request.uuid,
      (request) => {
        this.request = request
        this.outcome?.update(request)
      },
      POLL_INTERVAL_MS,
      FINAL_RESULT_WAIT_MS,
    )
  }

  private showOutcome(request: SignRequest, headlineOverride: string | undefined): void {
    if (request.status === 'pending') return
    this.settled = true
    this.watcher?.stop()
    this.countdown.stop()
    const headline = headlineOverride ?? outcomeHeadline(request, this.expiresAtMs, this.clock.now())
    this.outcome = new OutcomeView(this.root, request, headline)
  }

  private showFailure(error: unknown, walletLabel: string | undefined): void {
    const problem = describeFailure(error, walletLabel)
    if (problem.tone === 'caution') {
      this.enterDoubt(problem)
      return
    }
    this.showProblem(problem)
    // 409, 410: the request was settled elsewhere meanwhile; 502, 503 or no answer: the blob may have reached the node,
    // and the request be in doubt. Its status now, rather than at the watcher's next word.
    if (['409', '410', '502', '503', '0'].includes(problem.kind)) void this.refresh()
  }

  private showProblem(problem: Problem): void {
    this.problem.dataset.kind = problem.kind
    this.problem.dataset.tone = problem.tone
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
    // Into view where the user is looking: on a phone it sits just above the action bar, which would cover it.
    this.problem.scrollIntoView({ block: 'nearest' })
  }

  /** Shows why approving and rejecting wait, until the watcher brings the outcome, or the end of the doubt (leaveDoubt). */
  private enterDoubt(problem: Problem): void {
    if (this.settled) return
    if (!this.inDoubt || this.problem.hidden) this.showProblem(problem)
    if (this.inDoubt) return
    this.inDoubt = true
    this.showStatus(IN_DOUBT_STATUS)
    // Nothing to do before the time runs out, and the service keeps the request past it until the ledger decides.
    this.countdown.element.hidden = true
    this.refreshControls()
  }

  /** The service released the submission: the ledger can never take that transaction, and the user may sign again. */
  private leaveDoubt(): void {
    this.inDoubt = false
    this.askedAtTimeUp = false
    this.countdown.element.hidden = false
    this.hideProblem()
    if (!this.busy) this.showStatus('The transaction did not reach the ledger: you can approve again')
    this.refreshControls()
  }

  private hideProblem(): void {
    this.problem.hidden = true
  }

  /** Fetches the request's status now, without waiting for the watcher. */
  private async refresh(): Promise<void> {
    const askedAtMs = performance.now()
    try {
      this.onUpdate((await fetchSignRequest(this.request.uuid)).request, askedAtMs)
    } catch {
      // The watcher keeps trying.
    }
  }

  private setBusy(busy: boolean, statusText: string): void {
    this.busy = busy
    this.showStatus(statusText)
    this.status.classList.toggle('status-busy', busy)
    this.refreshControls()
  }

  /** The status line; while a submission is in doubt it says so, whatever else the page is doing. */
  private showStatus(text: string): void {
    this.status.replaceChildren(this.inDoubt ? IN_DOUBT_STATUS : text)
  }

  private refreshControls(): void {
    const choice = this.wallets.chosen
    this.approveButton.replaceChildren(choice === undefined ? 'Approve' : `Approve with ${choice.adapter.label}`)
    const waiting = this.busy || this.inDoubt
    this.approveButton.disabled = waiting || choice?.availability?.available !== true || choice === this.awaitingService
    this.rejectButton.disabled = waiting
    this.wallets.setDisabled(waiting)
  }
}
