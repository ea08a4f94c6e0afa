// Turns what a payload asks for into words and numbers a person can check before approving. Pure: no DOM.

/** An amount as the page shows it: one headline ("1.5 XRP", "12 USD") and the facts that qualify it. */
export interface AmountView {
  headline: string
  details: Array<[label: string, value: string]>
}

/** Transaction fields whose value is an amount. */
export const AMOUNT_FIELDS = new Set(['Amount', 'SendMax', 'DeliverMin', 'DeliverMax', 'LimitAmount', 'TakerGets', 'TakerPays', 'Fee'])

/** Transaction fields that carry text as hex (memos, domains, URIs). */
export const HEX_TEXT_FIELDS = new Set(['MemoType', 'MemoData', 'MemoFormat', 'Domain', 'URI'])

const DROPS_PER_XRP = 1_000_000n

/** "1500000" drops -> "1.5"; a drop is a millionth of an XRP, so six decimals are always exact. Null when not a number of drops. */
export function dropsToXrp(drops: string): string | null {
  if (!/^\d{1,20}$/.test(drops)) return null
  const value = BigInt(drops)
  const whole = (value / DROPS_PER_XRP).toLocaleString('en-US')
  const fraction = (value % DROPS_PER_XRP).toString().padStart(6, '0').replace(/0+$/, '')
  return fraction === '' ? whole : `${whole}.${fraction}`
}

/**
 * A currency code as a person reads it. Three-character codes stand as they are; 40-hex codes are decoded to their
 * ASCII text when every character is printable (the hex is kept so that look-alikes can be told apart).
 */
export function describeCurrency(code: string): { text: string; hex?: string } {
  if (!/^[0-9A-Fa-f]{40}$/.test(code)) return { text: code }
  const bytes = hexToBytes(code)
  // A leading zero byte is the standard layout: the ISO-like code sits in bytes 12 to 14.
  const ascii = bytes[0] === 0 ? bytes.slice(12, 15) : bytes.slice(0, bytes.length - trailingZeros(bytes))
  const printable = ascii.length > 0 && ascii.every((byte) => byte >= 0x20 && byte <= 0x7e)
  return printable ? { text: String.fromCharCode(...ascii).trim() || code, hex: code.toUpperCase() } : { text: code.toUpperCase() }
}

/** An XRP amount (a string of drops), an issued-currency amount {currency, issuer, value}, or an MPT amount. */
export function describeAmount(amount: unknown): AmountView | null {
  if (typeof amount === 'string') {
    const xrp = dropsToXrp(amount)
    return xrp === null ? null : { headline: `${xrp} XRP`, details: [] }
  }
  if (typeof amount !== 'object' || amount === null) return null
  const { currency, issuer, value, mpt_issuance_id: mptIssuanceId } = amount as Record<string, unknown>
  if (typeof value !== 'string') return null
  if (typeof mptIssuanceId === 'string') {
    return { headline: `${groupDigits(value)} (multi-purpose token)`, details: [['Token issuance', mptIssuanceId]] }
  }
  if (typeof currency !== 'string') return null
  const decoded = describeCurrency(currency)
  const details: AmountView['details'] = []
  if (typeof issuer === 'string') details.push(['Issuer', issuer])
  if (decoded.hex !== undefined) details.push(['Currency code (hex)', decoded.hex])
  return { headline: `${groupDigits(value)} ${decoded.text}`, details }
}

/** "1000000.5" -> "1,000,000.5", as XRP amounts are written; a value in another form (1e-5) stays as it is. */
function groupDigits(value: string): string {
  const parts = /^(-?)(\d+)(\.\d+)?$/.exec(value)
  if (parts === null) return value
  return `${parts[1]}${(parts[2] as string).replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${parts[3] ?? ''}`
}

const PARTIAL_PAYMENT = 0x00020000

/** A payment as its payer reads it: at most what may leave the account, and what arrives. */
export interface PaymentView {
  /** The headline: the amount delivered, or "Up to ..." when more than it may be spent or less may arrive. */
  headline: string
  /** The issuer and code of the amount the headline names. */
  details: AmountView['details']
  /** What arrives, when the headline is what may be spent, with its own issuer and code (they tell a look-alike apart). */
  receives: { text: string; details: AmountView['details'] } | null
}

/**
 * A payment's amounts in the payer's terms. A SendMax (another currency, or fees on top) makes the headline what may
 * leave the account; a partial payment makes what arrives a range, down to DeliverMin (or any amount), which the
 * headline must not hide: 0.000001 USD delivered for up to 1,000 XRP spent reads "Up to 1,000 XRP".
 */
export function describePayment(transaction: Record<string, unknown>): PaymentView {
  const amount = describeAmount(transaction.Amount)
  const sendMax = describeAmount(transaction.SendMax)
  const partial = typeof transaction.Flags === 'number' && (transaction.Flags & PARTIAL_PAYMENT) !== 0
  const delivered = amount?.headline ?? JSON.stringify(transaction.Amount ?? null)
  const deliveredDetails = amount?.details ?? []
  if (sendMax === null && !partial) return { headline: delivered, details: deliveredDetails, receives: null }
  const deliverMin = describeAmount(transaction.DeliverMin)
  const receives = partial
    ? `They receive at most ${delivered}, and may receive as little as ${deliverMin?.headline ?? 'any amount'} (a partial payment)`
    : `They receive ${delivered}`
  return sendMax === null
    ? { headline: `Up to ${delivered}`, details: deliveredDetails, receives: { text: receives, details: [] } }
    : { headline: `Up to ${sendMax.headline}`, details: sendMax.details, receives: { text: receives, details: deliveredDetails } }
}

const OFFER_IMMEDIATE_OR_CANCEL = 0x00020000
const OFFER_FILL_OR_KILL = 0x00040000
const OFFER_SELL = 0x00080000

/** A trade offer as the account that makes it reads it: what it gives, what it gets, and what stays on the order book. */
export interface OfferView extends PaymentView {
  receives: NonNullable<PaymentView['receives']>
  /** What happens to the part that does not trade at once. */
  remainder: string
}

/**
 * An OfferCreate in its maker's terms. The ledger names the amounts from the other side (TakerGets is what the taker
 * gets, so what this account gives), which reads backwards on a page: the headline is what may leave the account. An
 * offer buys TakerPays, paying at most TakerGets (less at a better rate); a Sell offer gives all of TakerGets, for at
 * least TakerPays.
 */
export function describeOffer(transaction: Record<string, unknown>): OfferView {
  const gives = describeAmount(transaction.TakerGets)
  const gets = describeAmount(transaction.TakerPays)
  const givesText = gives?.headline ?? JSON.stringify(transaction.TakerGets ?? null)
  const getsText = gets?.headline ?? JSON.stringify(transaction.TakerPays ?? null)
  const flags = typeof transaction.Flags === 'number' ? transaction.Flags : 0
  const sell = (flags & OFFER_SELL) !== 0
  const remainder =
    (flags & OFFER_FILL_OR_KILL) !== 0
      ? 'It trades in full at once or not at all: nothing stays on the order book.'
      : (flags & OFFER_IMMEDIATE_OR_CANCEL) !== 0
        ? 'What trades at once is kept; the rest is cancelled: nothing stays on the order book.'
        : `What does not trade at once stays on the order book, adding to the account’s reserve, until someone takes it${transaction.Expiration === undefined ? ' or it is cancelled' : ', it is cancelled or it expires'}.`
  return {
    headline: sell ? `Sell ${givesText}` : `Pay at most ${givesText}`,
    details: gives?.details ?? [],
    receives: { text: sell ? `For at least ${getsText}` : `To receive ${getsText}`, details: gets?.details ?? [] },
    remainder,
  }
}

/**
 * What a transaction does to the signing account that a person must not miss: the account deleted, or another key
 * given full control of it. Null for the rest.
 */
export function transactionConsequence(transaction: Record<string, unknown>): string | null {
  switch (transaction.TransactionType) {
    case 'AccountDelete':
      return 'This deletes the signing account: its whole XRP balance, less the fee, goes to the address below, and the account can no longer be used. A deletion’s fee is one owner reserve, far more than an ordinary fee.'
    case 'SetRegularKey':
      return typeof transaction.RegularKey === 'string'
        ? 'This gives the key below full control of the signing account: whoever holds that key can sign any transaction for it, and move everything it holds.'
        : 'This removes the signing account’s regular key: afterwards only its master key or its signer list can sign for it.'
    case 'SignerListSet':
      return transaction.SignerQuorum === 0
        ? 'This removes the signing account’s signer list.'
        : `This lets the accounts listed sign for the signing account together: any of them whose weights add up to ${String(transaction.SignerQuorum)} can sign any transaction for it, and move everything it holds.`
    case 'AccountSet':
      if (transaction.SetFlag === 4) {
        return 'This disables the signing account’s master key: afterwards only its regular key or signer list can sign for it. Without either, nothing can ever be signed for the account again.'
      }
      if (transaction.SetFlag === 6) return 'This gives up, for good, the signing account’s power to freeze the tokens it issues.'
      return null
    default:
      return null
  }
}

const FLAG_MEANINGS: Record<string, Array<[flag: number, meaning: string]>> = {
  Payment: [
    [0x00010000, 'No direct ripple: do not use the default path'],
    [0x00020000, 'Partial payment: the amount delivered may be less than the amount shown'],
    [0x00040000, 'Limit quality'],
  ],
  TrustSet: [
    [0x00010000, 'Authorize the other party to hold the currency'],
    [0x00020000, 'Set No Ripple'],
    [0x00040000, 'Clear No Ripple'],
    [0x00100000, 'Freeze the trust line'],
    [0x00200000, 'Unfreeze the trust line'],
  ],
  OfferCreate: [
    [0x00010000, 'Passive: do not consume offers that match exactly'],
    [0x00020000, 'Immediate or cancel'],
    [0x00040000, 'Fill or kill'],
    [0x00080000, 'Sell: exchange the whole amount offered, even for more than asked'],
  ],
  AccountSet: [
    [0x00010000, 'Require a destination tag'],
    [0x00020000, 'Do not require a destination tag'],
    [0x00040000, 'Require authorization for trust lines'],
    [0x00080000, 'Do not require authorization for trust lines'],
    [0x00100000, 'Disallow XRP'],
    [0x00200000, 'Allow XRP'],
  ],
}
const UNIVERSAL_FLAGS: Array<[flag: number, meaning: string]> = [
  [0x80000000, 'Fully canonical signature'],
  [0x40000000, 'Inner batch transaction'],
]

/** The meanings of the flags set in a transaction's Flags, for the types the page knows; unknown bits are named as such. */
export function describeFlags(transactionType: unknown, flags: number): string[] {
  const known = [...(FLAG_MEANINGS[String(transactionType)] ?? []), ...UNIVERSAL_FLAGS]
  const meanings: string[] = []
  let rest = flags >>> 0
  for (const [flag, meaning] of known) {
    if ((rest & flag) >>> 0 === flag) {
      meanings.push(meaning)
      rest = (rest & ~flag) >>> 0
    }
  }
  if (rest !== 0) meanings.push(`Other flags: 0x${rest.toString(16).toUpperCase().padStart(8, '0')}`)
  return meanings
}

const LABELS: Record<string, string> = { URI: 'URI', NFTokenID: 'NFToken ID', NetworkID: 'Network ID', InvoiceID: 'Invoice ID' }

/** "DestinationTag" -> "Destination tag": a field name as a label, keeping acronyms. */
export function fieldLabel(name: string): string {
  const known = LABELS[name]
  if (known !== undefined) return known
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(' ')
  return words.map((word, index) => (index === 0 || /^[A-Z0-9]{2,}$/.test(word) ? word : word.toLowerCase())).join(' ')
}

/** Hex that decodes to readable UTF-8 text, or null (binary data, odd length, control characters). */
export function hexToText(hex: string): string | null {
  if (hex.length === 0 || hex.length % 2 !== 0 || !/^[0-9A-Fa-f]+$/.test(hex)) return null
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array(hexToBytes(hex)))
    return [...text].some((char) => isControl(char.codePointAt(0) ?? 0)) ? null : text
  } catch {
    return null
  }
}

export { hasDeceptiveCharacters } from '../../platform/deceptive-characters.js'

/** C0 controls and DEL, except tab and line breaks, which text may hold. */
function isControl(code: number): boolean {
  return (code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) || code === 0x7f
}

/** Time left as "4:59" or "1:02:03"; never negative. */
export function formatRemaining(remainingMs: number): string {
  const totalSeconds = Math.max(0, Math.ceil(remainingMs / 1000))
  const hours = Math.floor(totalSeconds / 3600)
  const minutes = Math.floor((totalSeconds % 3600) / 60)
  const seconds = String(totalSeconds % 60).padStart(2, '0')
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${seconds}` : `${minutes}:${seconds}`
}

/** How long before expiresAt an expired status must arrive to count as a cancellation; absorbs clock jitter. */
const EXPIRY_TOLERANCE_MS = 1500

/**
 * The API says "expired" both when time ran out and when the app cancelled: an expiry noticed well before expiresAt
 * can only be a cancellation (or a clock far off), so the page words it that way.
 */
export function expiredHeadline(expiresAtMs: number, noticedAtMs: number): string {
  return noticedAtMs < expiresAtMs - EXPIRY_TOLERANCE_MS ? 'This request was cancelled or expired' : 'This request expired'
}

/** "XRP Ledger mainnet", "XRP Ledger testnet": the network a request is for, as the page names it. */
export function networkName(network: string): string {
  return network === 'mainnet' ? 'XRP Ledger mainnet' : `XRP Ledger ${network}`
}

function hexToBytes(hex: string): number[] {
  const bytes: number[] = []
  for (let index = 0; index < hex.length; index += 2) bytes.push(Number.parseInt(hex.slice(index, index + 2), 16))
  return bytes
}

function trailingZeros(bytes: number[]): number {
  let count = 0
  while (count < bytes.length && bytes[bytes.length - 1 - count] === 0) count++
  return count
}
