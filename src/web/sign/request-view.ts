// What the request asks for, in human terms: every value is inserted as text, so hostile content stays inert, and
// text from the application is isolated (<bdi>), with a warning where it hides or reorders characters.
import type { PayloadType } from '../../features/payloads/model.js'
import { type Child, h, isolated } from '../shared/dom.js'
import type { SignRequest } from './api.js'
import { AMOUNT_FIELDS, describeAmount, describeFlags, fieldLabel, HEX_TEXT_FIELDS, hasDeceptiveCharacters, hexToText } from './format.js'

const ACTIONS: Record<PayloadType, string> = {
  connect: 'connect your wallet',
  sign: 'sign a transaction',
  signAndSubmit: 'sign and submit a transaction',
  signMessage: 'sign a message',
}

/** The top of the page: who asks, for what, and on which network. */
export function renderAsker(request: SignRequest): HTMLElement {
  const mainnet = request.network === 'mainnet'
  return h(
    'header',
    { className: 'asker' },
    h('h1', {}, isolated(request.project.name, { testId: 'project-name' }), ` asks you to ${ACTIONS[request.type]}`),
    h(
      'p',
      { className: mainnet ? 'network' : 'network network-test', testId: 'network' },
      mainnet ? 'XRP Ledger mainnet' : `XRP Ledger ${request.network}`,
      !mainnet && h('span', { className: 'badge badge-warning' }, 'Not mainnet: test funds only'),
    ),
  )
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
        h('pre', { className: 'signed-text', testId: 'challenge' }, request.challenge ?? ''),
      ]
    case 'signMessage':
      return [
        h('h2', {}, 'Message to sign'),
        h('pre', { className: 'signed-text' }, isolated(request.message ?? '', { testId: 'message' })),
        deceptionWarning(request.message ?? '', 'message', 'message-warning'),
      ]
    case 'sign':
    case 'signAndSubmit':
      return [
        renderTransaction(request.transaction ?? {}),
        request.type === 'signAndSubmit'
          ? h('p', { className: 'hint' }, 'Once you approve, Countersign submits the signed transaction to the XRP Ledger.')
          : h(
              'p',
              { className: 'hint' },
              'Once you approve, the signed transaction goes to ',
              isolated(request.project.name),
              ', which may submit it to the XRP Ledger.',
            ),
      ]
  }
}

const PAYMENT_SUMMARY_FIELDS = new Set(['TransactionType', 'Amount', 'Destination', 'DestinationTag'])

function renderTransaction(transaction: Record<string, unknown>): HTMLElement {
  const type = transaction.TransactionType
  const isPayment = type === 'Payment'
  const rest = Object.entries(transaction).filter(([name, value]) =>
    isPayment ? !PAYMENT_SUMMARY_FIELDS.has(name) : name !== 'TransactionType' && !(name === 'SigningPubKey' && value === ''),
  )
  return h(
    'div',
    { className: 'transaction', testId: 'transaction' },
    isPayment ? renderPaymentSummary(transaction) : h('h2', {}, `Transaction: ${String(type)}`),
    rest.length > 0 &&
      h(
        'dl',
        { className: 'fields' },
        ...rest.flatMap(([name, value]) => [
          h('dt', { attrs: { title: name } }, fieldLabel(name)),
          h('dd', { testId: `tx-field-${name}` }, renderValue(name, value, transaction)),
        ]),
      ),
  )
}

function renderPaymentSummary(transaction: Record<string, unknown>): HTMLElement {
  const amount = describeAmount(transaction.Amount)
  const tag = transaction.DestinationTag
  return h(
    'div',
    { className: 'payment' },
    h('h2', {}, 'Payment'),
    h('p', { className: 'amount', testId: 'payment-amount' }, amount?.headline ?? jsonText(transaction.Amount)),
    amount !== null && amount.details.length > 0 && detailsList(amount.details),
    h(
      'dl',
      { className: 'fields' },
      h('dt', {}, 'To'),
      h('dd', { className: 'address', testId: 'payment-destination' }, String(transaction.Destination ?? '(none)')),
      h('dt', {}, 'Destination tag'),
      h('dd', { testId: 'payment-destination-tag' }, tag === undefined ? 'none' : String(tag)),
    ),
  )
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

/** An XRP Ledger classic address is set in a monospace face, so that look-alike characters stand apart. */
function textOrAddress(text: string): Child {
  return /^r[1-9A-HJ-NP-Za-km-z]{24,34}$/.test(text) ? h('span', { className: 'address' }, text) : isolated(text)
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
