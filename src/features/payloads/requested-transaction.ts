// Rules for the transaction an application asks a user to sign (POST /payloads, types sign and signAndSubmit).

import { decode } from 'ripple-binary-codec'
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
  let encoded: string
  try {
    encoded = encodeTransaction(transaction)
  } catch (error) {
    // The codec's own errors name what it could not encode; a TypeError is its internals tripping on a value of the
    // wrong kind (TransactionType "toString"), which says nothing to the application.
    const reason = error instanceof TypeError ? 'a field holds a value the codec cannot take' : (error as Error).message
    errors.push({ field, message: `cannot be encoded as an XRP Ledger transaction: ${reason}` })
    return errors
  }
  // The codec skips a field named as an Object.prototype member ("toString", "valueOf"): it would sign without it, and
  // no wallet's transaction could ever match the request.
  const dropped = droppedField(transaction, decode(encoded), field)
  if (dropped !== undefined) errors.push({ field: dropped, message: 'is not an XRP Ledger transaction field' })
  return errors
}

/** The first field of `requested`, at any depth, that its encoding (decoded as `encoded`) does not hold. */
function droppedField(requested: unknown, encoded: unknown, path: string): string | undefined {
  if (typeof requested !== 'object' || requested === null) return undefined
  if (typeof encoded !== 'object' || encoded === null) return path
  for (const key of Object.keys(requested)) {
    const here = `${path}.${key}`
    if (!Object.hasOwn(encoded, key)) return here
    const dropped = droppedField((requested as Record<string, unknown>)[key], (encoded as Record<string, unknown>)[key], here)
    if (dropped !== undefined) return dropped
  }
  return undefined
}

function isAmountShape(value: unknown): boolean {
  if (typeof value === 'string') return XRP_DROPS.test(value)
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const amount = value as Record<string, unknown>
  return typeof amount.value === 'string' && typeof amount.currency === 'string'
}
