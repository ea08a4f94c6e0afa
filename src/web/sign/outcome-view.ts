// The signing page once the request is answered: what happened, its facts (signer, transaction hash, the ledger's
// final word), what was asked, and the way back to the application.
import type { PayloadType } from '../../features/payloads/model.js'
import { copyButton, grouped } from '../shared/copy.js'
import { button, type Child, h, isolated, replaceChildren } from '../shared/dom.js'
import type { SignRequest } from './api.js'
import { renderAsker } from './asker-view.js'
import { expiredHeadline } from './format.js'
import { httpUrl } from './http-url.js'
import { renderRequest } from './request-view.js'
import { copyableAddress } from './transaction-view.js'

/** Long enough to read the outcome (or to choose to stay) before the app takes over. */
const REDIRECT_DELAY_MS = 5000

/** What happened, in the past tense. */
const SIGNED_HEADLINES: Record<PayloadType, string> = {
  connect: 'Your wallet was connected',
  sign: 'The transaction was signed',
  signAndSubmit: 'The transaction was signed and submitted',
  signMessage: 'The message was signed',
}

/** A submitted transaction the validated ledger applied with a failure (tec): signed and submitted, but not done. */
export function failedOnLedger(request: SignRequest): boolean {
  const validated = request.submission?.validatedResult ?? null
  return request.type === 'signAndSubmit' && request.status === 'signed' && validated !== null && validated !== 'tesSUCCESS'
}

const FAILED_ON_LEDGER_HEADLINE = 'The transaction failed on the XRP Ledger'

/** The headline of a request no longer pending; an expiry noticed well before expiresAt reads as a cancellation. */
export function outcomeHeadline(request: SignRequest, expiresAtMs: number, nowMs: number): string {
  if (failedOnLedger(request)) return FAILED_ON_LEDGER_HEADLINE
  return request.status === 'signed'
    ? SIGNED_HEADLINES[request.type]
    : request.status === 'rejected'
      ? 'This request was rejected'
      : expiredHeadline(expiresAtMs, nowMs)
}

export class OutcomeView {
  private readonly section: HTMLElement
  private readonly headline: HTMLElement
  private readonly details: HTMLElement
  private readonly summary: HTMLElement

  /** Replaces the page in root with the outcome of request, under headline. */
  constructor(root: HTMLElement, request: SignRequest, headline: string) {
    const status = request.status
    const redirect = request.redirectUrl === undefined ? null : httpUrl(request.redirectUrl, location.href)
    this.headline = h('h2', { testId: 'status' }, headline)
    this.details = h('div', { className: 'outcome-details' }, ...outcomeLines(request))
    this.summary = h('div', { className: 'outcome-summary' }, renderRequest(request))
    this.section = h(
      'section',
      { className: `outcome outcome-${status}`, testId: 'outcome', attrs: { 'data-status': status } },
      this.headline,
      this.details,
      redirect === null ? h('p', { className: 'hint' }, 'You can close this page.') : returnControls(redirect, request.project.name),
    )
    this.show(request, headline)
    replaceChildren(
      root,
      renderAsker(request),
      this.section,
      h(
        'section',
        { className: 'asked', attrs: { 'aria-labelledby': 'asked-heading' } },
        h('h2', { className: 'asked-heading', attrs: { id: 'asked-heading' } }, status === 'signed' ? 'What was signed' : 'What was asked'),
        this.summary,
      ),
    )
  }

  /** Shows what the service has learnt of the outcome since (followOutcome in status-watch.ts). */
  update(request: SignRequest): void {
    if (failedOnLedger(request)) this.show(request, FAILED_ON_LEDGER_HEADLINE)
    replaceChildren(this.details, ...outcomeLines(request))
    replaceChildren(this.summary, renderRequest(request))
  }

  /** The headline, in the tab's title too; a failure on the ledger is styled as one, not as the signature it followed. */
  private show(request: SignRequest, headline: string): void {
    this.headline.textContent = headline
    document.title = `${headline} · \u2068${request.project.name}\u2069`
    this.section.classList.toggle('outcome-failed', failedOnLedger(request))
  }
}

/** "Back to <project>" at once, or on its own after a few seconds unless the person chooses to stay. */
function returnControls(redirect: string, projectName: string): HTMLElement {
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
    // The app chooses where it returns; the person sees where that is before it happens.
    h('p', { className: 'hint return-host', testId: 'redirect-host' }, 'It opens ', h('code', {}, new URL(redirect).host), '.'),
  )
}

/**
 * The facts of an outcome: who signed, the transaction hash with its explorer link, and the ledger's final word. The
 * hash is the one the ledger holds, once known: the wallet may have submitted the same transaction signed otherwise,
 * which took this one's place.
 */
function outcomeLines(request: SignRequest): Child[] {
  const explorer = request.explorerUrl === undefined ? null : httpUrl(request.explorerUrl, location.href, { httpsOnly: false })
  const txHash = request.submission?.txHash ?? request.txHash
  return [
    request.signerAddress !== undefined &&
      h(
        'div',
        { className: 'fact' },
        h('span', { className: 'fact-label' }, 'Signed by'),
        copyableAddress(request.signerAddress, 'signer-address', 'Copy the signing address'),
      ),
    txHash !== undefined &&
      h(
        'div',
        { className: 'fact' },
        h('span', { className: 'fact-label' }, 'Transaction hash'),
        h(
          'span',
          { className: 'copyable' },
          grouped(txHash, { className: 'hash', testId: 'tx-hash' }),
          copyButton(txHash, { accessibleName: 'Copy the transaction hash', testId: 'copy-tx-hash' }),
        ),
        txHash !== request.txHash &&
          h(
            'p',
            { className: 'fact-note', testId: 'signed-otherwise' },
            'The ledger holds the same transaction signed otherwise (your wallet submitted its own copy): this is its hash.',
          ),
        request.type === 'sign' &&
          h(
            'p',
            { className: 'fact-note', testId: 'not-submitted' },
            'Countersign did not send it to the XRP Ledger: ',
            isolated(request.project.name),
            ' may submit it.',
          ),
        explorer !== null &&
          request.type !== 'sign' &&
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
