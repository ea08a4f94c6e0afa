// Rules for the transaction an application asks a user to sign (POST /payloads, types sign and signAndSubmit).
import type { FieldError } from '../../platform/errors.js'
import { encodeTransaction, FLAGS_MESSAGE, isFlagsValue } from '../../platform/xrpl/encode-transaction.js'
import { couldPassAsConnectTransaction } from '../signing/verify/connect-challenge.js'

/** Fields that carry a signature; a request must leave them to the wallet. */
const SIGNATURE_FIELDS = ['TxnSignature', 'Signers'] as const

/** Fields whose value is an amount: a string of drops for XRP, or an issued-currency object. */
const AMOUNT_FIELDS = ['Amount', 'SendMax', 'DeliverMin', 'LimitAmount', 'TakerGets', 'TakerPays', 'Fee'] as const

/** XRP in drops, as the ledger writes it: decimal digits only (the codec also takes "0x10", " 10" or "+10"). */
const XRP_DROPS = /^[0-9]+$/

/** Validates a requested transaction; returns every problem found, each naming its field. */
export function validateRequestedTransaction(transaction: Record<string, unknown>, field = 'transaction'): FieldError[] {
  const errors: FieldError[] = []
  if (typeof transaction.TransactionType !== 'string' || transaction.TransactionType === '') {
    errors.push({ field: `${field}.TransactionType`, message: 'is required: the transaction type, such as "Payment"' })
    return errors
  }
  for (const name of SIGNATURE_FIELDS) {
    if (name in transaction) errors.push({ field: `${field}.${name}`, message: 'must not be set: the wallet adds signatures' })
  }
  if ('SigningPubKey' in transaction && transaction.SigningPubKey !== '') {
    errors.push({ field: `${field}.SigningPubKey`, message: 'must be absent or empty: the wallet sets its own key' })
  }
  for (const name of AMOUNT_FIELDS) {
    if (name in transaction && !isAmountShape(transaction[name])) {
      errors.push({
        field: `${field}.${name}`,
        message: 'must be a string of drops (for XRP, e.g. "1000000") or an object {currency, issuer, value} with value as a string',
      })
    }
  }
  if ('Flags' in transaction && !isFlagsValue(transaction.Flags)) errors.push({ field: `${field}.Flags`, message: FLAGS_MESSAGE })
  if (couldPassAsConnectTransaction(transaction)) {
    errors.push({
      field: `${field}.Memos`,
      message: 'must not carry the countersign/connect memo: that transaction is a sign-in proof, which only a connect request asks for',
    })
  }
  if (errors.length > 0) return errors
  // The codec looks a field's name up in a plain object of definitions, so a name of Object.prototype's ("toString",
  // "valueOf") is skipped without an error: the request would be signed without it, and no wallet's transaction could
  // ever match it. Found by a walk over the names, rather than by decoding the encoding again on every creation.
  const unknown = prototypeNamedField(transaction, field)
  if (unknown !== undefined) return [{ field: unknown, message: 'is not an XRP Ledger transaction field' }]
  try {
    encodeTransaction(transaction)
  } catch (error) {
    // The codec's own errors name what it could not encode; a TypeError is its internals tripping on a value of the
    // wrong kind (TransactionType "toString"), which says nothing to the application.
    const reason = error instanceof TypeError ? 'a field holds a value the codec cannot take' : (error as Error).message
    errors.push({ field, message: `cannot be encoded as an XRP Ledger transaction: ${reason}` })
  }
  return errors
}

/** The first field, at any depth, named as a member of Object.prototype. */
function prototypeNamedField(value: unknown, path: string): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  for (const [key, item] of Object.entries(value)) {
    const here = `${path}.${key}`
    if (key in Object.prototype) return here
    const found = prototypeNamedField(item, here)
    if (found !== undefined) return found
  }
  return undefined
}

function isAmountShape(value: unknown): boolean {
  if (typeof value === 'string') return XRP_DROPS.test(value)
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const amount = value as Record<string, unknown>
  return typeof amount.value === 'string' && typeof amount.currency === 'string'
}
