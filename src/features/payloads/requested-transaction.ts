// Rules for the transaction an application asks a user to sign (POST /payloads, types sign and signAndSubmit): what
// the codec would sign otherwise than asked, or what no wallet's signed transaction could ever match, is refused here,
// naming its field, rather than found at approval, where it would blame the user's wallet.
import { isValidClassicAddress, isValidXAddress, xAddressToClassicAddress } from 'ripple-address-codec'
import { DEFAULT_DEFINITIONS } from 'ripple-binary-codec'
import type { FieldError } from '../../platform/errors.js'
import { MAX_DETAILS } from '../../platform/http/errors.js'
import { encodeTransaction } from '../../platform/xrpl/encode-transaction.js'
import { couldPassAsConnectTransaction } from '../signing/verify/connect-challenge.js'

/** Fields that carry a signature; a request must leave them to the wallet. */
const SIGNATURE_FIELDS = ['TxnSignature', 'Signers'] as const
/** Top-level fields checked before the walk, each with its own message. */
const CHECKED_FIRST: ReadonlySet<string> = new Set([...SIGNATURE_FIELDS, 'SigningPubKey', 'TransactionType'])

/** XRP in drops, as the ledger writes it: decimal digits only (the codec also takes "0x10", " 10" or "+10"). */
const XRP_DROPS = /^[0-9]+$/
/** An integer as text: decimal digits, with a minus sign for a negative one. */
const DECIMAL_INTEGER = /^-?[0-9]+$/
/** An issued amount's value as the ledger writes it: a decimal, with an exponent or not (the codec reads "0x10" as 16). */
const ISSUED_VALUE = /^-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$/
/** A currency code as the codec writes it as given: three characters of its set, or 40 upper-case hex digits. */
const CURRENCY_CODE = /^(?:[A-Za-z0-9?!@#$%^&*(){}[\]|]{3}|[0-9A-F]{40})$/
/** The largest MPT amount: the codec cuts a larger one off at 64 bits (2^64 + 1 is signed as 1). */
const MAX_MPT_AMOUNT = 2n ** 63n - 1n
/** The largest 64-bit integer. */
const MAX_UINT64 = 2n ** 64n - 1n
/** The 64-bit fields the codec reads in decimal (the others in hex). */
const DECIMAL_UINT64_FIELDS: ReadonlySet<string> = new Set([
  'MaximumAmount',
  'OutstandingAmount',
  'MPTAmount',
  'LockedAmount',
  'ConfidentialOutstandingAmount',
])
/**
 * The powers of ten an issued amount's value may have, by its first significant digit: the ledger keeps a mantissa of
 * 16 digits and an exponent from -96 to 80, so 1e-81 to 9999999999999999e80 (the codec signs 1e-9999999999 as 0).
 */
const ISSUED_MAGNITUDES = [-81, 95] as const
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

/**
 * Validates a requested transaction; returns its problems, each naming its field. The search stops at the most a 422
 * lists (MAX_DETAILS), so that no body costs more to answer than to read.
 */
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
  if (errors.length > 0) return errors
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
 * ledger by its name, and a value of its type that the codec writes as given. Values of the types left (Vector256, the
 * integer fields read as names) are the codec's to read or refuse.
 */
function checkObject(object: Record<string, unknown>, path: string, errors: FieldError[], topLevel: boolean): void {
  for (const [key, value] of Object.entries(object)) {
    if (errors.length >= MAX_DETAILS) return
    const here = `${path}.${key}`
    if (topLevel && CHECKED_FIRST.has(key)) continue
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
  // An integer field read as a name (LedgerEntryType; PermissionValue, below) has no range of its own.
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
  // A permission by its name: the codec also takes a number as a string ("0" is signed as Invalid).
  if (definition.name === 'PermissionValue') {
    return typeof value === 'string' && /^[A-Za-z]+$/.test(value) ? undefined : 'must be a permission by its name, such as "Payment"'
  }
  switch (type) {
    case 'AccountID':
      return addressProblem(definition.name, value, topLevel)
    case 'Currency':
      return isCurrencyCode(value) ? undefined : CURRENCY_MESSAGE
    case 'UInt64':
      return uint64Problem(definition.name, value)
    case 'Number':
      return isNumberValue(value) ? undefined : 'must be a decimal of at most 19 significant digits, as a string (e.g. "1.5")'
    case 'PathSet':
      return pathSetProblem(value)
    case 'XChainBridge':
      return bridgeProblem(value)
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
  if (errors.length >= MAX_DETAILS) return
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
 * An address: a classic one, or an X-address without a tag. Anything else the codec reads otherwise than given: an
 * empty string as the all-zero account (rrrrrrrrrrrrrrrrrrrrrhoLvTp, which no key signs for), an array as the text of
 * its items, and an X-address with a tag as the account and a SourceTag or DestinationTag of its own, which a
 * wallet's transaction, naming the account and the tag apart, never matches field by field.
 */
function addressProblem(name: string, value: unknown, topLevel: boolean): string | undefined {
  if (typeof value === 'string' && isValidClassicAddress(value)) return undefined
  if (typeof value !== 'string' || !isValidXAddress(value))
    return 'must be an XRP Ledger address, such as "rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe"'
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
    if (!isMptIssuance(value.mpt_issuance_id) || !isDigits(value.value)) return AMOUNT_MESSAGE
    return value.value.length <= 19 && BigInt(value.value) <= MAX_MPT_AMOUNT
      ? undefined
      : `must be an MPT amount of at most ${MAX_MPT_AMOUNT}`
  }
  if (keys !== 'currency,issuer,value' || typeof value.value !== 'string' || !ISSUED_VALUE.test(value.value)) return AMOUNT_MESSAGE
  if (isXrpCode(value.currency)) return 'must not be XRP in an issued amount: XRP is a string of drops'
  if (!isCurrencyCode(value.currency)) return CURRENCY_MESSAGE
  if (!isAddressWithoutTag(value.issuer)) return 'must name its issuer by an XRP Ledger address without a tag'
  if (!isIssuedValueInRange(value.value)) return 'must have a value the ledger can hold: 0, or from 1e-81 to 9999999999999999e80'
  return undefined
}

/** Whether an issued value, already of the decimal shape, is 0 or within the ledger's powers of ten. */
function isIssuedValueInRange(value: string): boolean {
  const [, whole = '', fraction = '', exponent = '0'] = /^-?([0-9]*)(?:\.([0-9]*))?(?:[eE]([-+]?[0-9]+))?$/.exec(value) ?? []
  const digits = whole + fraction
  const first = digits.search(/[1-9]/)
  if (first === -1) return true
  const magnitude = whole.length - 1 - first + Number(exponent)
  return magnitude >= ISSUED_MAGNITUDES[0] && magnitude <= ISSUED_MAGNITUDES[1]
}

/** A 64-bit integer: a string, in decimal for the fields the codec reads so and in hex for the others, or a safe JSON integer. */
function uint64Problem(name: string, value: unknown): string | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? undefined : 'must be a string, or an integer below 2^53'
  if (DECIMAL_UINT64_FIELDS.has(name)) {
    return isDigits(value) && value.length <= 20 && BigInt(value) <= MAX_UINT64
      ? undefined
      : `must be a string of decimal digits, at most ${MAX_UINT64}`
  }
  return typeof value === 'string' && /^[0-9A-Fa-f]{1,16}$/.test(value) ? undefined : 'must be a string of 1 to 16 hex digits'
}

/** A Number field: a decimal the codec keeps as given (it rounds to 19 significant digits), or a safe JSON integer. */
function isNumberValue(value: unknown): boolean {
  if (typeof value === 'number') return Number.isSafeInteger(value)
  if (typeof value !== 'string' || !ISSUED_VALUE.test(value)) return false
  const mantissa = value
    .replace(/[eE].*$/, '')
    .replace(/[-.]/g, '')
    .replace(/^0+/, '')
    .replace(/0+$/, '')
  return mantissa.length <= 19
}

/** Paths: arrays of hops, each naming an account, a currency or an issuer, as path_find gives them. */
function pathSetProblem(value: unknown): string | undefined {
  const message =
    'must be an array of paths, each an array of hops {account?, currency?, issuer?} (addresses without a tag, currency codes)'
  if (!Array.isArray(value)) return message
  for (const path of value) {
    if (!Array.isArray(path)) return message
    for (const hop of path) {
      if (!isPlainObject(hop)) return message
      const keys = Object.keys(hop)
      // type and type_hex come with path_find's answer: the codec derives them again from the others.
      if (keys.some((key) => !PATH_HOP_KEYS.has(key)) || !keys.some((key) => key === 'account' || key === 'currency' || key === 'issuer'))
        return message
      if ('account' in hop && !isAddressWithoutTag(hop.account)) return message
      if ('issuer' in hop && !isAddressWithoutTag(hop.issuer)) return message
      if ('currency' in hop && !isCurrencyCode(hop.currency)) return message
    }
  }
  return undefined
}

const PATH_HOP_KEYS: ReadonlySet<string> = new Set(['account', 'currency', 'issuer', 'type', 'type_hex'])

/** A cross-chain bridge: its two door accounts and the asset on each chain. */
function bridgeProblem(value: unknown): string | undefined {
  const message =
    'must be {LockingChainDoor, LockingChainIssue, IssuingChainDoor, IssuingChainIssue}, doors as addresses and issues as assets'
  if (!isPlainObject(value)) return message
  const keys = Object.keys(value).sort().join(',')
  if (keys !== 'IssuingChainDoor,IssuingChainIssue,LockingChainDoor,LockingChainIssue') return message
  if (!isAddressWithoutTag(value.LockingChainDoor) || !isAddressWithoutTag(value.IssuingChainDoor)) return message
  return issueProblem(value.LockingChainIssue) ?? issueProblem(value.IssuingChainIssue)
}

/** An asset, as AMM transactions name one: {currency: "XRP"}, {currency, issuer} for an issued one, or {mpt_issuance_id}. */
function issueProblem(value: unknown): string | undefined {
  const message = 'must be {"currency": "XRP"}, {currency, issuer} for an issued currency, or {mpt_issuance_id}'
  if (!isPlainObject(value)) return message
  const keys = Object.keys(value).sort().join(',')
  if (keys === 'currency') return value.currency === 'XRP' ? undefined : message
  if (keys === 'currency,issuer') {
    return !isXrpCode(value.currency) && isCurrencyCode(value.currency) && isAddressWithoutTag(value.issuer) ? undefined : message
  }
  if (keys === 'mpt_issuance_id') return isMptIssuance(value.mpt_issuance_id) ? undefined : message
  return message
}

/** A classic address, or an X-address without a tag (the codec writes both as the account). */
function isAddressWithoutTag(value: unknown): boolean {
  if (typeof value !== 'string') return false
  if (isValidClassicAddress(value)) return true
  return isValidXAddress(value) && xAddressToClassicAddress(value).tag === false
}

const CURRENCY_MESSAGE = 'must have a currency code of three characters (letters, digits or ?!@#$%^&*(){}[]|) or 40 upper-case hex digits'

/**
 * A currency code the codec writes as given. It keeps only the low byte of each character of a three-character code:
 * "ŕSD" would be signed as USD, "ŘRP" as XRP, and a Cyrillic "UЅD", which reads as USD, as three other bytes.
 */
function isCurrencyCode(value: unknown): value is string {
  return typeof value === 'string' && CURRENCY_CODE.test(value)
}

function isMptIssuance(value: unknown): boolean {
  return typeof value === 'string' && MPT_ISSUANCE_ID.test(value)
}

/** "XRP", by its code or its all-zero hex form. */
function isXrpCode(currency: unknown): boolean {
  return currency === 'XRP' || (typeof currency === 'string' && /^0{40}$/.test(currency))
}

function isDigits(value: unknown): value is string {
  return typeof value === 'string' && XRP_DROPS.test(value)
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
