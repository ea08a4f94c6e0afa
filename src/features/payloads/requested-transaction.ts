// Rules for the transaction an application asks a user to sign (POST /payloads, types sign and signAndSubmit): what
// the codec would sign otherwise than asked, or what no wallet's signed transaction could ever match, is refused here,
// naming its field, rather than found at approval, where it would blame the user's wallet.
import { isValidClassicAddress, isValidXAddress, xAddressToClassicAddress } from 'ripple-address-codec'
import { DEFAULT_DEFINITIONS } from 'ripple-binary-codec'
import type { FieldError } from '../../platform/errors.js'
import { encodeTransaction } from '../../platform/xrpl/encode-transaction.js'
import { couldPassAsConnectTransaction } from '../signing/verify/connect-challenge.js'

/** Fields that carry a signature; a request must leave them to the wallet. */
const SIGNATURE_FIELDS = ['TxnSignature', 'Signers'] as const

/** The most problems a transaction is searched for: a 422 lists no more (docs/api.md, "Errors"). */
const MAX_ERRORS = 50

/** XRP in drops, as the ledger writes it: decimal digits only (the codec also takes "0x10", " 10" or "+10"). */
const XRP_DROPS = /^[0-9]+$/
/** An integer as text: decimal digits, with a minus sign for a negative one. */
const DECIMAL_INTEGER = /^-?[0-9]+$/
/** An issued amount's value as the ledger writes it: a decimal, with an exponent or not (the codec reads "0x10" as 16). */
const ISSUED_VALUE = /^-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$/
/** An MPT issuance: 24 bytes in hex. */
const MPT_ISSUANCE_ID = /^[0-9A-Fa-f]{48}$/
/** A Blob: whole bytes in hex (the codec drops an odd last digit: "abc" is signed as AB). */
const BLOB_HEX = /^(?:[0-9A-Fa-f]{2})*$/
/** Hash fields: exactly their length in hex (the codec drops an odd last digit of a hash one digit too long). */
const HASH_DIGITS: Readonly<Record<string, number>> = { Hash128: 32, Hash160: 40, Hash192: 48, Hash256: 64 }

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

/** What to send instead of a name that is not a field but that an application may well have met. */
const FIELD_HINTS: Readonly<Record<string, string>> = {
  DeliverMax: "is not a transaction field: it is how API v2 shows a Payment's Amount; send Amount (xrpl.js autofill does)",
}

const TRANSACTION_TYPES: ReadonlySet<string> = new Set(DEFAULT_DEFINITIONS.transactionNames)

const AMOUNT_MESSAGE =
  'must be a string of drops (for XRP, e.g. "1000000"), an object {currency, issuer, value} with value a decimal string, or {mpt_issuance_id, value}'

type FieldDefinition = ReturnType<typeof DEFAULT_DEFINITIONS.field.fromString>

/**
 * A field of the ledger's definitions by its own name, and one the codec writes; undefined otherwise. The codec looks
 * names up in a plain object that also holds each field under its number ("65537") and Object.prototype's members
 * ("toString"), and leaves out without an error whatever it finds no field of that name for ("destinationTag"): the
 * request would be signed without it, and no wallet's transaction could ever match it.
 */
function fieldNamed(name: string): FieldDefinition | undefined {
  if (!Object.hasOwn(DEFAULT_DEFINITIONS.field, name)) return undefined
  const definition: FieldDefinition | undefined = DEFAULT_DEFINITIONS.field.fromString(name)
  return definition?.name === name && definition.isSerialized ? definition : undefined
}

/**
 * The ledger's pseudo-transactions (amendments, fees, the negative UNL), which validators make and no account signs:
 * their type codes are 100 and over.
 */
function isPseudoTransaction(transactionType: string): boolean {
  const code = DEFAULT_DEFINITIONS.transactionType.from(transactionType)?.ordinal
  return typeof code === 'number' && code >= 100
}

/** Validates a requested transaction; returns its problems (the first MAX_ERRORS), each naming its field. */
export function validateRequestedTransaction(transaction: Record<string, unknown>, field = 'transaction'): FieldError[] {
  const errors: FieldError[] = []
  const type = transaction.TransactionType
  if (typeof type !== 'string' || type === '') {
    errors.push({ field: `${field}.TransactionType`, message: 'is required: the transaction type, such as "Payment"' })
    return errors
  }
  // By its name only: the codec also takes a type's number as a string ("0" is signed as a Payment).
  if (!TRANSACTION_TYPES.has(type)) {
    errors.push({ field: `${field}.TransactionType`, message: 'is not a transaction type of the XRP Ledger, such as "Payment"' })
  } else if (isPseudoTransaction(type)) {
    errors.push({ field: `${field}.TransactionType`, message: 'is a pseudo-transaction, which validators make and no account signs' })
  }
  for (const name of SIGNATURE_FIELDS) {
    if (name in transaction) errors.push({ field: `${field}.${name}`, message: 'must not be set: the wallet adds signatures' })
  }
  if ('SigningPubKey' in transaction && transaction.SigningPubKey !== '') {
    errors.push({ field: `${field}.SigningPubKey`, message: 'must be absent or empty: the wallet sets its own key' })
  }
  if (couldPassAsConnectTransaction(transaction)) {
    errors.push({
      field: `${field}.Memos`,
      message: 'must not carry the countersign/connect memo: that transaction is a sign-in proof, which only a connect request asks for',
    })
  }
  checkObject(transaction, field, errors, true)
  if (errors.length > 0) return errors.slice(0, MAX_ERRORS)
  try {
    encodeTransaction(transaction)
  } catch (error) {
    // The codec's own errors name what it could not encode; a TypeError is its internals tripping on a value of the
    // wrong kind, which says nothing to the application.
    const reason = error instanceof TypeError ? 'a field holds a value the codec cannot take' : (error as Error).message
    errors.push({ field, message: `cannot be encoded as an XRP Ledger transaction: ${reason}` })
  }
  return errors
}

/**
 * Each field of an object of the ledger (the transaction, a Memo, a SignerEntry...), at any depth: a field of the
 * ledger by its name, and a value of its type that the codec writes as given. Values of the other types (paths,
 * numbers, bridges...) are the codec's to read or refuse.
 */
function checkObject(object: Record<string, unknown>, path: string, errors: FieldError[], topLevel: boolean): void {
  for (const [key, value] of Object.entries(object)) {
    if (errors.length >= MAX_ERRORS) return
    const here = `${path}.${key}`
    // Signatures are refused above with their own message; TransactionType is checked above by name.
    if (topLevel && (key === 'TxnSignature' || key === 'Signers' || key === 'SigningPubKey' || key === 'TransactionType')) continue
    const definition = fieldNamed(key)
    if (definition === undefined) {
      errors.push({
        field: here,
        message: (Object.hasOwn(FIELD_HINTS, key) && FIELD_HINTS[key]) || 'is not an XRP Ledger transaction field',
      })
      continue
    }
    const problem = problemWith(definition, value, here, errors, topLevel)
    if (problem !== undefined) errors.push({ field: here, message: problem })
  }
}

/** What is wrong with a field's value, by its type; nested objects and arrays are walked, their problems added. */
function problemWith(
  definition: FieldDefinition,
  value: unknown,
  here: string,
  errors: FieldError[],
  topLevel: boolean,
): string | undefined {
  const type = definition.type.name
  // An integer field read as a name (LedgerEntryType, PermissionValue) is the codec's to check.
  const range = definition.associatedType === DEFAULT_DEFINITIONS.dataTypes[type] ? INTEGER_RANGES[type] : undefined
  if (range !== undefined) {
    // xrpl.js takes some as strings (OfferSequence: number | string): decimal digits are the same integer to the codec.
    // Flags is compared bit by bit at approval, as a number only.
    const number = typeof value === 'string' && definition.name !== 'Flags' && DECIMAL_INTEGER.test(value) ? Number(value) : value
    const fits = typeof number === 'number' && Number.isInteger(number) && number >= range[0] && number <= range[1]
    return fits ? undefined : `must be an integer between ${range[0]} and ${range[1]}`
  }
  // An XRP delta (FeeAmountDelta) may be negative.
  if (definition.associatedType === DEFAULT_DEFINITIONS.dataTypes.SignedAmount) {
    return typeof value === 'string' && DECIMAL_INTEGER.test(value)
      ? undefined
      : 'must be a string of drops, with a minus sign for a negative change'
  }
  switch (type) {
    case 'AccountID':
      return xAddressProblem(definition.name, value, topLevel)
    case 'Blob':
      return typeof value === 'string' && BLOB_HEX.test(value) ? undefined : 'must be hex, two digits a byte'
    case 'Hash128':
    case 'Hash160':
    case 'Hash192':
    case 'Hash256': {
      const digits = HASH_DIGITS[type] as number
      return typeof value === 'string' && value.length === digits && BLOB_HEX.test(value) ? undefined : `must be ${digits} hex digits`
    }
    case 'Amount':
      return amountProblem(value)
    case 'Issue':
      return issueProblem(value)
    case 'STObject':
      if (!isPlainObject(value)) return 'must be an object of ledger fields'
      checkObject(value, here, errors, false)
      return undefined
    case 'STArray':
      if (!Array.isArray(value)) return 'must be an array of objects, each {"<Field>": {...}}, such as [{"Memo": {...}}]'
      for (const [index, entry] of value.entries()) checkArrayEntry(entry, `${here}.${index}`, errors)
      return undefined
    default:
      return undefined
  }
}

/** An entry of an array of the ledger: one field, of an object type, such as {"Memo": {...}}. */
function checkArrayEntry(entry: unknown, path: string, errors: FieldError[]): void {
  if (errors.length >= MAX_ERRORS) return
  const names = isPlainObject(entry) ? Object.keys(entry) : []
  const definition = names.length === 1 ? fieldNamed(names[0] as string) : undefined
  if (definition?.type.name !== 'STObject') {
    errors.push({ field: path, message: 'must be an object of one field, whose value is an object, such as {"Memo": {...}}' })
    return
  }
  const problem = problemWith(definition, (entry as Record<string, unknown>)[definition.name], `${path}.${definition.name}`, errors, false)
  if (problem !== undefined) errors.push({ field: `${path}.${definition.name}`, message: problem })
}

/**
 * An X-address with a tag: the codec signs its tag as SourceTag or DestinationTag, so a wallet's transaction, which
 * names the account and the tag apart, never matches the request's field by field.
 */
function xAddressProblem(name: string, value: unknown, topLevel: boolean): string | undefined {
  // An X-address starts with X (main network) or T (test networks); a classic one with r. Decoding every classic
  // address as an X-address would cost a base58 decode and its checksum for nothing.
  if (typeof value !== 'string' || (value[0] !== 'X' && value[0] !== 'T') || !isValidXAddress(value)) return undefined
  const { classicAddress, tag } = xAddressToClassicAddress(value)
  if (tag === false) return undefined
  const tagField = topLevel ? TAG_FIELDS[name] : undefined
  return tagField === undefined
    ? 'must not be an X-address with a tag: give the classic address'
    : `must not be an X-address with a tag: give the classic address ${classicAddress}, and ${tag} as ${tagField}`
}

function amountProblem(value: unknown): string | undefined {
  if (typeof value === 'string') return XRP_DROPS.test(value) ? undefined : AMOUNT_MESSAGE
  if (!isPlainObject(value)) return AMOUNT_MESSAGE
  const keys = Object.keys(value).sort().join(',')
  if (keys === 'mpt_issuance_id,value') {
    return typeof value.mpt_issuance_id === 'string' && MPT_ISSUANCE_ID.test(value.mpt_issuance_id) && isDigits(value.value)
      ? undefined
      : AMOUNT_MESSAGE
  }
  if (keys !== 'currency,issuer,value' || typeof value.value !== 'string' || !ISSUED_VALUE.test(value.value)) return AMOUNT_MESSAGE
  if (isXrpCode(value.currency)) return 'must not be XRP in an issued amount: XRP is a string of drops'
  return undefined
}

/** An asset, as AMM transactions name one: {currency: "XRP"}, {currency, issuer} for an issued one, or {mpt_issuance_id}. */
function issueProblem(value: unknown): string | undefined {
  const message = 'must be {"currency": "XRP"}, {currency, issuer} for an issued currency, or {mpt_issuance_id}'
  if (!isPlainObject(value)) return message
  const keys = Object.keys(value).sort().join(',')
  if (keys === 'currency') return value.currency === 'XRP' ? undefined : message
  if (keys === 'currency,issuer') {
    return !isXrpCode(value.currency) && isAddressWithoutTag(value.issuer) ? undefined : message
  }
  if (keys === 'mpt_issuance_id')
    return typeof value.mpt_issuance_id === 'string' && MPT_ISSUANCE_ID.test(value.mpt_issuance_id) ? undefined : message
  return message
}

/** A classic address, or an X-address without a tag (the codec writes both as the account). */
function isAddressWithoutTag(value: unknown): boolean {
  if (typeof value !== 'string') return false
  if (isValidClassicAddress(value)) return true
  return isValidXAddress(value) && xAddressToClassicAddress(value).tag === false
}

/** "XRP", by its code or its all-zero hex form. */
function isXrpCode(currency: unknown): boolean {
  return currency === 'XRP' || (typeof currency === 'string' && /^0{40}$/.test(currency))
}

function isDigits(value: unknown): boolean {
  return typeof value === 'string' && XRP_DROPS.test(value)
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
