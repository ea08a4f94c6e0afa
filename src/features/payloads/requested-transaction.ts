// Rules for the transaction an application asks a user to sign (POST /payloads, types sign and signAndSubmit).
import { isValidXAddress, xAddressToClassicAddress } from 'ripple-address-codec'
import { DEFAULT_DEFINITIONS } from 'ripple-binary-codec'
import type { FieldError } from '../../platform/errors.js'
import { encodeTransaction } from '../../platform/xrpl/encode-transaction.js'
import { couldPassAsConnectTransaction } from '../signing/verify/connect-challenge.js'

/** Fields that carry a signature; a request must leave them to the wallet. */
const SIGNATURE_FIELDS = ['TxnSignature', 'Signers'] as const

/** Fields whose value is an amount: a string of drops for XRP, or an issued-currency object. */
const AMOUNT_FIELDS = ['Amount', 'SendMax', 'DeliverMin', 'LimitAmount', 'TakerGets', 'TakerPays', 'Fee'] as const

/** XRP in drops, as the ledger writes it: decimal digits only (the codec also takes "0x10", " 10" or "+10"). */
const XRP_DROPS = /^[0-9]+$/

/**
 * The integer field types and their ranges. The codec takes a string for any of them and reads it with parseInt, so
 * "abc" would be signed as 0 and "0x10" as 16; a number out of range or with a fraction it refuses with an error of
 * its own internals.
 */
const INTEGER_RANGES: Readonly<Record<string, readonly [number, number]>> = {
  UInt8: [0, 0xff],
  UInt16: [0, 0xffff],
  UInt32: [0, 0xffffffff],
  Int32: [-0x80000000, 0x7fffffff],
}

/** The field a tag of an X-address goes to, by the address field the X-address is given in. */
const TAG_FIELDS: Readonly<Record<string, string>> = { Account: 'SourceTag', Destination: 'DestinationTag' }

/**
 * The ledger's pseudo-transactions (amendments, fees, the negative UNL), which validators make and no account signs,
 * and "Invalid": their type codes are 100 and over, and below 0.
 */
function isPseudoTransaction(transactionType: string): boolean {
  const code = DEFAULT_DEFINITIONS.transactionType.from(transactionType)?.ordinal
  return typeof code === 'number' && (code >= 100 || code < 0)
}

/** Validates a requested transaction; returns every problem found, each naming its field. */
export function validateRequestedTransaction(transaction: Record<string, unknown>, field = 'transaction'): FieldError[] {
  const errors: FieldError[] = []
  if (typeof transaction.TransactionType !== 'string' || transaction.TransactionType === '') {
    errors.push({ field: `${field}.TransactionType`, message: 'is required: the transaction type, such as "Payment"' })
    return errors
  }
  if (isPseudoTransaction(transaction.TransactionType)) {
    errors.push({ field: `${field}.TransactionType`, message: 'is a pseudo-transaction, which validators make and no account signs' })
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
    } else if (isIssuedAsXrp(transaction[name])) {
      errors.push({ field: `${field}.${name}.currency`, message: 'must not be XRP in an issued amount: XRP is a string of drops' })
    }
  }
  if (couldPassAsConnectTransaction(transaction)) {
    errors.push({
      field: `${field}.Memos`,
      message: 'must not carry the countersign/connect memo: that transaction is a sign-in proof, which only a connect request asks for',
    })
  }
  checkFields(transaction, field, errors)
  if (errors.length > 0) return errors
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

/**
 * What the codec would sign otherwise than asked, at any depth, found by one walk over the names:
 * - a name of Object.prototype's ("toString", "valueOf"): the codec looks names up in a plain object of definitions,
 *   so it skips the field without an error, and no wallet's transaction could ever match the request;
 * - an integer field (Flags, Sequence, DestinationTag...) given as anything but an integer in its range;
 * - an X-address with a tag: the codec signs its tag as SourceTag or DestinationTag, so a wallet's transaction, which
 *   names the account and the tag apart, never matches the request's field by field.
 */
function checkFields(value: unknown, path: string, errors: FieldError[], topLevel = true): void {
  if (typeof value !== 'object' || value === null) return
  for (const [key, item] of Object.entries(value)) {
    const here = `${path}.${key}`
    if (key in Object.prototype) {
      errors.push({ field: here, message: 'is not an XRP Ledger transaction field' })
      continue
    }
    const definition = DEFAULT_DEFINITIONS.field.fromString(key)
    const type: string | undefined = definition?.type?.name
    // An integer field read as a name (TransactionType, LedgerEntryType, PermissionValue) is the codec's to check.
    const isInteger = type !== undefined && definition.associatedType === DEFAULT_DEFINITIONS.dataTypes[type]
    const range = isInteger ? INTEGER_RANGES[type] : undefined
    if (range !== undefined) {
      if (typeof item !== 'number' || !Number.isInteger(item) || item < range[0] || item > range[1]) {
        errors.push({ field: here, message: `must be an integer between ${range[0]} and ${range[1]}` })
      }
    } else if (type === 'AccountID' && typeof item === 'string' && isValidXAddress(item)) {
      const { classicAddress, tag } = xAddressToClassicAddress(item)
      const tagField = topLevel ? TAG_FIELDS[key] : undefined
      if (tag !== false) {
        errors.push({
          field: here,
          message:
            tagField === undefined
              ? 'must not be an X-address with a tag: give the classic address'
              : `must not be an X-address with a tag: give the classic address ${classicAddress}, and ${tag} as ${tagField}`,
        })
      }
    } else {
      checkFields(item, here, errors, false)
    }
  }
}

/** An issued-currency amount in "XRP" (by its code or its all-zero hex form), which the ledger refuses. */
function isIssuedAsXrp(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false
  const currency = (value as Record<string, unknown>).currency
  return currency === 'XRP' || (typeof currency === 'string' && /^0{40}$/.test(currency))
}

function isAmountShape(value: unknown): boolean {
  if (typeof value === 'string') return XRP_DROPS.test(value)
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const amount = value as Record<string, unknown>
  return typeof amount.value === 'string' && typeof amount.currency === 'string'
}
