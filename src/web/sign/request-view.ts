// What the request asks for, in human terms: every value is inserted as text, so hostile content stays inert, and
// text from the application is isolated (<bdi>), with a warning where it hides or reorders characters.
import type { PayloadType } from '../../features/payloads/model.js'
import { copyButton, grouped } from '../shared/copy.js'
import { type Child, h, isolated } from '../shared/dom.js'
import type { SignRequest } from './api.js'
import {
  AMOUNT_FIELDS,
  describeAmount,
  describeFlags,
  dropsToXrp,
  fieldLabel,
  HEX_TEXT_FIELDS,
  hasDeceptiveCharacters,
  hexToText,
} from './format.js'

const ACTIONS: Record<PayloadType, string> = {
  connect: 'connect your wallet',
  sign: 'sign a transaction',
  signAndSubmit: 'sign and submit a transaction',
  signMessage: 'sign a message',
}

/** The top of the page: who asks (logo, name, verified website), for what, and on which network. */
export function renderAsker(request: SignRequest): HTMLElement {
  const { project } = request
  const logo = project.logoUrl === undefined ? null : sameOriginPath(project.logoUrl)
  return h(
    'header',
    { className: 'asker' },
    h(
      'div',
      { className: 'who' },
      logo !== null && h('img', { className: 'logo', testId: 'project-logo', attrs: { src: logo, alt: '', width: '48', height: '48' } }),
      h(
        'div',
        {},
        h(
          'h1',
          {},
          isolated(project.name, { className: 'project-name', testId: 'project-name' }),
          // Once the request is settled the page tells of the past.
          ` ${request.status === 'pending' ? 'asks' : 'asked'} you to ${ACTIONS[request.type]}`,
        ),
        project.website !== undefined &&
          h(
            'p',
            { className: 'origin', testId: 'project-website' },
            h('span', { className: 'origin-host' }, hostOf(project.website)),
            h('span', { className: 'verified' }, 'verified website'),
          ),
      ),
    ),
    networkLine(request.network),
  )
}

function networkLine(network: string): HTMLElement {
  const mainnet = network === 'mainnet'
  return h(
    'p',
    { className: mainnet ? 'network' : 'network network-test', testId: 'network' },
    networkName(network),
    !mainnet && h('span', { className: 'badge badge-warning' }, 'Not mainnet: test funds only'),
  )
}

function networkName(network: string): string {
  return network === 'mainnet' ? 'XRP Ledger mainnet' : `XRP Ledger ${network}`
}

/** The host a person checks (shop.example), with the scheme only when it is not https. */
function hostOf(origin: string): string {
  try {
    const url = new URL(origin)
    return url.protocol === 'https:' ? url.host : `${url.protocol}//${url.host}`
  } catch {
    return origin
  }
}

/** The service serves logos itself: only a path on this origin is ever loaded. */
function sameOriginPath(path: string): string | null {
  return /^\/logos\/[^/?#]+\/[0-9a-f]{64}$/.test(path) ? path : null
}

/** The body of the request: the transaction, message or challenge, and the app's own note. */
export function renderRequest(request: SignRequest): HTMLElement {
  return h(
    'section',
    { className: 'request', attrs: { 'aria-label': 'What is asked' } },
    request.customInstructions !== undefined &&
      h(
        'aside',
        { className: 'instructions' },
        h('h2', {}, 'Note from ', isolated(request.project.name)),
        h('p', {}, isolated(request.customInstructions, { testId: 'custom-instructions' })),
        deceptionWarning(request.customInstructions, 'note', 'custom-instructions-warning'),
        h('p', { className: 'hint' }, 'Written by the app; Countersign does not check it.'),
      ),
    request.signers !== undefined &&
      h(
        'p',
        { className: 'signers', testId: 'signers' },
        request.signers.length === 1 ? 'Sign with this account: ' : 'Sign with one of these accounts: ',
        h('code', {}, request.signers.join(', ')),
        '. Another account is refused.',
      ),
    ...renderAsked(request),
  )
}

function renderAsked(request: SignRequest): Child[] {
  switch (request.type) {
    case 'connect':
      return [
        h('p', { className: 'lead' }, 'This site will learn your XRP Ledger address.'),
        h('p', {}, 'Your wallet signs this text to prove the address is yours. Nothing is sent to the ledger.'),
        // Shown whole: a few short lines, which the person should read before signing.
        h('pre', { className: 'signed-text whole', testId: 'challenge' }, request.challenge ?? ''),
      ]
    case 'signMessage':
      return [
        h('h2', {}, 'Message to sign'),
        // A long message scrolls inside its box; the box takes keyboard focus, so it scrolls without a mouse too.
        h(
          'pre',
          { className: 'signed-text', attrs: { tabindex: '0', 'aria-label': 'Message to sign' } },
          isolated(request.message ?? '', { testId: 'message' }),
        ),
        deceptionWarning(request.message ?? '', 'message', 'message-warning'),
      ]
    case 'sign':
    case 'signAndSubmit':
      return [
        renderTransaction(request),
        request.status === 'pending' &&
          (request.type === 'signAndSubmit'
            ? h('p', { className: 'hint' }, 'Once you approve, Countersign submits the signed transaction to the XRP Ledger.')
            : h(
                'p',
                { className: 'hint' },
                'Once you approve, the signed transaction goes to ',
                isolated(request.project.name),
                ', which may submit it to the XRP Ledger.',
              )),
      ]
  }
}

/** Fields the summary shows; the other fields follow, smaller. */
const SUMMARY_FIELDS = new Set(['TransactionType', 'Account', 'Fee'])
const PAYMENT_SUMMARY_FIELDS = new Set([...SUMMARY_FIELDS, 'Amount', 'Destination', 'DestinationTag'])

function renderTransaction(request: SignRequest): HTMLElement {
  const transaction = request.transaction ?? {}
  const type = transaction.TransactionType
  const isPayment = type === 'Payment'
  const summarized = isPayment ? PAYMENT_SUMMARY_FIELDS : SUMMARY_FIELDS
  const rest = Object.entries(transaction).filter(([name, value]) => !summarized.has(name) && !(name === 'SigningPubKey' && value === ''))
  return h(
    'div',
    { className: 'transaction', testId: 'transaction' },
    isPayment ? renderPaymentHeadline(transaction) : h('h2', {}, `Transaction: ${String(type)}`),
    h('dl', { className: 'fields summary', testId: 'summary' }, ...(isPayment ? paymentRows(transaction) : []), ...summaryRows(request)),
    rest.length > 0 &&
      h(
        'dl',
        { className: 'fields secondary', testId: 'other-fields' },
        ...rest.flatMap(([name, value]) => [
          h('dt', { attrs: { title: name } }, fieldLabel(name)),
          h('dd', { testId: `tx-field-${name}` }, renderValue(name, value, transaction)),
        ]),
      ),
  )
}

function renderPaymentHeadline(transaction: Record<string, unknown>): HTMLElement {
  const amount = describeAmount(transaction.Amount)
  return h(
    'div',
    { className: 'payment' },
    h('h2', {}, 'Payment'),
    h('p', { className: 'amount', testId: 'payment-amount' }, amount?.headline ?? jsonText(transaction.Amount)),
    amount !== null && amount.details.length > 0 && detailsList(amount.details),
  )
}

function paymentRows(transaction: Record<string, unknown>): Child[] {
  const tag = transaction.DestinationTag
  const destination = transaction.Destination
  return [
    h('dt', {}, 'To'),
    h(
      'dd',
      {},
      typeof destination === 'string' ? copyableAddress(destination, 'payment-destination', 'Copy the destination address') : '(none)',
    ),
    h('dt', {}, 'Destination tag'),
    h('dd', { testId: 'payment-destination-tag' }, tag === undefined ? 'None' : String(tag)),
  ]
}

/** From which account, at what fee, on which network: from the request, or from the wallet once it has signed. */
function summaryRows(request: SignRequest): Child[] {
  const transaction = request.transaction ?? {}
  const account = request.signed?.account ?? (typeof transaction.Account === 'string' ? transaction.Account : undefined)
  const fee = request.signed?.fee ?? (typeof transaction.Fee === 'string' ? transaction.Fee : undefined)
  const feeXrp = fee === undefined ? null : dropsToXrp(fee)
  // Before signing, what the wallet will fill in is said so; after a rejection or an expiry it is never known.
  const pending = request.status === 'pending'
  return [
    (account !== undefined || pending) && h('dt', {}, 'From'),
    (account !== undefined || pending) &&
      h(
        'dd',
        { testId: 'transaction-account' },
        account === undefined
          ? h('span', { className: 'muted' }, 'The account you approve with')
          : copyableAddress(account, 'account-address', 'Copy the sending account'),
      ),
    (feeXrp !== null || pending) && h('dt', {}, 'Fee'),
    (feeXrp !== null || pending) &&
      h(
        'dd',
        { testId: 'transaction-fee' },
        feeXrp === null ? h('span', { className: 'muted' }, 'Set by your wallet, usually about 0.00001 XRP') : `${feeXrp} XRP`,
      ),
    h('dt', {}, 'Network'),
    h('dd', {}, networkName(request.network)),
  ]
}

/** An address in groups, with a button that copies it whole. */
export function copyableAddress(address: string, testId: string, accessibleName: string): HTMLElement {
  const text = grouped(address, { className: 'address', testId })
  return h('span', { className: 'copyable' }, text, copyButton(address, { accessibleName, select: text }))
}

function renderValue(name: string, value: unknown, transaction: Record<string, unknown>): Child {
  if (AMOUNT_FIELDS.has(name)) {
    const amount = describeAmount(value)
    if (amount !== null) return h('span', {}, amount.headline, amount.details.length > 0 && detailsList(amount.details))
  }
  if (name === 'Flags' && typeof value === 'number') {
    const meanings = describeFlags(transaction.TransactionType, value)
    return h('span', {}, String(value), meanings.length > 0 && h('ul', { className: 'flags' }, ...meanings.map((m) => h('li', {}, m))))
  }
  if (HEX_TEXT_FIELDS.has(name) && typeof value === 'string') {
    const text = hexToText(value)
    if (text !== null) {
      return h(
        'span',
        {},
        h('q', {}, isolated(text)),
        h('span', { className: 'hex' }, `hex ${value}`),
        deceptionWarning(text, 'field', `tx-field-${name}-warning`),
      )
    }
  }
  if (Array.isArray(value)) {
    return h('ol', { className: 'nested' }, ...value.map((item) => h('li', {}, renderArrayItem(name, item, transaction))))
  }
  if (typeof value === 'object' && value !== null) {
    return h(
      'dl',
      { className: 'fields nested' },
      ...Object.entries(value).flatMap(([key, inner]) => [
        h('dt', { attrs: { title: key } }, fieldLabel(key)),
        h('dd', {}, renderValue(key, inner, transaction)),
      ]),
    )
  }
  return typeof value === 'string' ? textOrAddress(value) : jsonText(value)
}

/** An XRP Ledger classic address is set in a monospace face and in groups, so that look-alike characters stand apart. */
function textOrAddress(text: string): Child {
  return /^r[1-9A-HJ-NP-Za-km-z]{24,34}$/.test(text) ? grouped(text, { className: 'address' }) : isolated(text)
}

const DECEPTION_WARNINGS = {
  message: 'This message contains invisible or direction-changing characters: what you see may not be all that you sign.',
  note: 'This note contains invisible or direction-changing characters: it may not read as it is written.',
  field: 'This text contains invisible or direction-changing characters: it may not read as it is written.',
}

/** A visible warning when the application's text hides or reorders characters; nothing otherwise. */
function deceptionWarning(text: string, kind: keyof typeof DECEPTION_WARNINGS, testId: string): Child {
  return hasDeceptiveCharacters(text) && h('p', { className: 'warning', testId }, DECEPTION_WARNINGS[kind])
}

/** Ledger arrays wrap each element in a one-key object ({Memo: {...}}, {Signer: {...}}): show the inner fields directly. */
function renderArrayItem(name: string, item: unknown, transaction: Record<string, unknown>): Child {
  const entries = typeof item === 'object' && item !== null && !Array.isArray(item) ? Object.entries(item) : []
  const [wrapper] = entries
  if (
    entries.length === 1 &&
    wrapper !== undefined &&
    typeof wrapper[1] === 'object' &&
    wrapper[1] !== null &&
    !Array.isArray(wrapper[1])
  ) {
    return renderValue(wrapper[0], wrapper[1], transaction)
  }
  return renderValue(name, item, transaction)
}

function detailsList(details: Array<[string, string]>): HTMLElement {
  return h(
    'dl',
    { className: 'fields amount-details' },
    ...details.flatMap(([label, value]) => [h('dt', {}, label), h('dd', {}, textOrAddress(value))]),
  )
}

function jsonText(value: unknown): string {
  return value === undefined ? '(none)' : JSON.stringify(value)
}
