// A transaction as the signing page shows it: a summary (for a payment, its amount and destination; the account, fee
// and network), then every other field in words, with amounts, flags and hex text decoded and addresses grouped.
// Every value is inserted as text.
import { copyButton, grouped } from '../shared/copy.js'
import { type Child, h, isolated } from '../shared/dom.js'
import type { SignRequest } from './api.js'
import { deceptionWarning } from './deception-warning.js'
import {
  AMOUNT_FIELDS,
  describeAmount,
  describeFlags,
  describeOffer,
  describePayment,
  dropsToXrp,
  fieldLabel,
  HEX_TEXT_FIELDS,
  hexToText,
  networkName,
  type PaymentView,
  transactionConsequence,
} from './format.js'

/** Fields the summary shows for every transaction; the other fields follow, smaller. */
const SUMMARY_FIELDS = ['TransactionType', 'Account', 'Fee']

/** The address a transaction that hands over the account names: in the summary, with a copy button, not among the rest. */
const HANDED_TO: Record<string, { field: string; label: string }> = {
  AccountDelete: { field: 'Destination', label: 'Balance goes to' },
  SetRegularKey: { field: 'RegularKey', label: 'Key given control' },
}

/** A transaction: its summary, then its other fields. */
export function renderTransaction(request: SignRequest): HTMLElement {
  const transaction = request.transaction ?? {}
  const lead = leadOf(transaction)
  const summarized = new Set([...SUMMARY_FIELDS, ...lead.fields])
  const rest = Object.entries(transaction).filter(([name, value]) => !summarized.has(name) && !(name === 'SigningPubKey' && value === ''))
  const consequence = transactionConsequence(transaction)
  return h(
    'div',
    { className: 'transaction', testId: 'transaction' },
    lead.headline,
    consequence !== null && h('p', { className: 'warning consequence', testId: 'consequence' }, consequence),
    h('dl', { className: 'fields summary', testId: 'summary' }, ...lead.rows, ...summaryRows(request)),
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

/** What a transaction leads with: its headline, the summary rows of its own, and the fields those say (not repeated below). */
function leadOf(transaction: Record<string, unknown>): { headline: HTMLElement; rows: Child[]; fields: string[] } {
  const type = String(transaction.TransactionType)
  if (type === 'Payment') {
    return {
      headline: renderAmounts('Payment', describePayment(transaction), 'payment'),
      rows: paymentRows(transaction),
      fields: ['Amount', 'Destination', 'DestinationTag'],
    }
  }
  if (type === 'OfferCreate') {
    const offer = describeOffer(transaction)
    const remainder = h('p', { className: 'hint', testId: 'offer-remainder' }, offer.remainder)
    return { headline: renderAmounts('Trade offer', offer, 'offer', remainder), rows: [], fields: ['TakerGets', 'TakerPays'] }
  }
  const handedTo = HANDED_TO[type]
  return {
    headline: h('h2', {}, `Transaction: ${type}`),
    rows: handedTo === undefined ? [] : handedToRows(transaction, handedTo),
    fields: handedTo === undefined ? [] : [handedTo.field],
  }
}

/** A transaction that moves amounts: its title, what may leave the account in large type, then what comes of it. */
function renderAmounts(title: string, view: PaymentView, testIdPrefix: string, ...after: Child[]): HTMLElement {
  return h(
    'div',
    { className: 'payment' },
    h('h2', {}, title),
    h('p', { className: 'amount', testId: `${testIdPrefix}-amount` }, view.headline),
    view.details.length > 0 && detailsList(view.details),
    view.receives !== null && h('p', { className: 'receives', testId: `${testIdPrefix}-receives` }, view.receives.text),
    view.receives !== null && view.receives.details.length > 0 && detailsList(view.receives.details),
    ...after,
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

function handedToRows(transaction: Record<string, unknown>, { field, label }: { field: string; label: string }): Child[] {
  const address = transaction[field]
  return [
    h('dt', {}, label),
    h('dd', {}, typeof address === 'string' ? copyableAddress(address, 'handed-to', `Copy: ${label.toLowerCase()}`) : '(none)'),
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
        feeXrp === null
          ? h(
              'span',
              { className: 'muted' },
              transaction.TransactionType === 'AccountDelete'
                ? 'Set by your wallet: one owner reserve, far more than an ordinary fee'
                : 'Set by your wallet, usually about 0.00001 XRP',
            )
          : `${feeXrp} XRP`,
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
