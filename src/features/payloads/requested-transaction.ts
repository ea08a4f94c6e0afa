// Rules for the transaction an application asks a user to sign (POST /payloads, types sign and signAndSubmit).
import type { FieldError } from '../../platform/errors.js'
import { encodeTransaction } from '../../platform/xrpl/encode-transaction.js'
import { couldPassAsConnectTransaction } from '../signing/verify/connect-challenge.js'

/** Fields that carry a signature; a request must leave them to the wallet. */
const SIGNATURE_FIELDS = ['TxnSignature', 'Signers'] as const

/** Fields whose value is an amount: a string of drops for XRP, or an issued-currency object. */
const AMOUNT_FIELDS = ['Amount', 'SendMax', 'DeliverMin', 'LimitAmount', 'TakerGets', 'TakerPays', 'Fee'] as const

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
  if (couldPassAsConnectTransaction(transaction)) {
    errors.push({
      field: `${field}.Memos`,
      message: 'must not carry the countersign/connect memo: that transaction is a sign-in proof, which only a connect request asks for',
    })
  }
  if (errors.length > 0) return errors
  try {
    encodeTransaction(transaction)
  } catch (error) {
    errors.push({ field, message: `cannot be encoded as an XRP Ledger transaction: ${(error as Error).message}` })
  }
  return errors
}

function isAmountShape(value: unknown): boolean {
  if (typeof value === 'string') return true
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const amount = value as Record<string, unknown>
  return typeof amount.value === 'string' && typeof amount.currency === 'string'
}
