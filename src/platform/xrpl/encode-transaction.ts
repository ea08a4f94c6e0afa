// A transaction's binary encoding (ripple-binary-codec), without the cost of the errors the codec throws and catches,
// and what it says of two transactions: whether they are the same but for their signatures.
import { decodeAccountID } from 'ripple-address-codec'
import { DEFAULT_DEFINITIONS, encode } from 'ripple-binary-codec'

type JsonTransaction = Parameters<typeof encode>[0]

/**
 * ripple-binary-codec's `encode`, the same bytes out at less than half the cost (a Payment of XRP to a classic address:
 * 46 µs in the codec alone, 16 to 20 here). The codec tries every string value of a transaction as an X-address, and
 * a value that is not one (a classic address, "Payment") is refused by throwing an error, which it catches: most of
 * its time goes into the stack traces of those errors. So the stack traces are switched off while it runs (it runs
 * synchronously; an error it throws at the caller carries its message, which is all a caller reads). And a classic
 * address is read three times (as an X-address, then again as one, then as itself): each one at the top level (a
 * field of type AccountID, an amount's or an asset's issuer) is decoded here once and handed over as the 40 hex digits
 * the codec takes as they are. An X-address, or anything that does not decode as a classic address, is handed over as
 * it came, for the codec to read or refuse as it would.
 */
export function encodeTransaction(transaction: Record<string, unknown>): string {
  const stackTraceLimit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    return encode(withAccountsAsHex(transaction) as JsonTransaction)
  } finally {
    Error.stackTraceLimit = stackTraceLimit
  }
}

/** Flags as the ledger takes them: an integer that fits in 32 bits (the codec would take "x" as 0, and "5" as 5). */
export function isFlagsValue(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 0xffffffff
}
export const FLAGS_MESSAGE = 'must be an integer between 0 and 4294967295'

/** tfFullyCanonicalSig: some wallets set it; since the RequireFullyCanonicalSig amendment it changes nothing. */
export const TF_FULLY_CANONICAL_SIG = 0x80000000

/** What signs a transaction: its signatures, and the key (or keys) that made them. */
export const SIGNATURE_FIELDS: ReadonlySet<string> = new Set(['SigningPubKey', 'TxnSignature', 'Signers'])

/**
 * Whether two transactions are the same but for their signatures: every field the signer approved (Sequence or Ticket,
 * Fee, LastLedgerSequence, Memos... all of them) equal, whoever signed, with whichever of the account's keys, or which
 * set of a multisigned account's signers. A wallet that submits its own copy, or signers who gather another set of
 * signatures, make one; the ledger applies whichever comes first, and the other can never apply. Compared by their
 * canonical encoding, as the ledger would hash them, but for tfFullyCanonicalSig in Flags, which a wallet may add as
 * it signs and which changes nothing; one that does not encode (a field this codec does not know) is not the same as
 * one that does.
 */
export function sameTransaction(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const unsigned = (transaction: Record<string, unknown>) => {
    try {
      const fields = Object.fromEntries(Object.entries(transaction).filter(([field]) => !SIGNATURE_FIELDS.has(field)))
      const flags = typeof fields.Flags === 'number' ? (fields.Flags & ~TF_FULLY_CANONICAL_SIG) >>> 0 : fields.Flags
      if (flags === 0) delete fields.Flags
      else fields.Flags = flags
      return encodeTransaction(fields)
    } catch {
      return null
    }
  }
  const encoded = unsigned(a)
  return encoded !== null && encoded === unsigned(b)
}

/** The transaction with its top-level classic addresses as hex; itself when it has none. */
function withAccountsAsHex(transaction: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined
  // Own enumerable fields, as the codec reads them (Object.entries).
  for (const name of Object.keys(transaction)) {
    const value = transaction[name]
    // fromString is a lookup on an object: a name such as "toString" finds no field's type.
    const type: string | undefined = DEFAULT_DEFINITIONS.field.fromString(name)?.type?.name
    const hex = type === 'AccountID' ? accountHex(value) : type === 'Amount' || type === 'Issue' ? issuerAsHex(value) : undefined
    if (hex !== undefined) {
      copy ??= { ...transaction }
      copy[name] = hex
    }
  }
  return copy ?? transaction
}

/** An amount {currency, issuer, value} or an asset {currency, issuer} with its issuer as hex, when that is a classic address. */
function issuerAsHex(value: unknown): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.keys(value).includes('issuer')) return undefined
  const issuer = accountHex((value as Record<string, unknown>).issuer)
  return issuer === undefined ? undefined : { ...value, issuer }
}

const CLASSIC_ADDRESS = /^r[1-9A-HJ-NP-Za-km-z]{24,34}$/

/** A classic address as the codec's 40 hex digits; undefined for anything else. */
function accountHex(value: unknown): string | undefined {
  if (typeof value !== 'string' || !CLASSIC_ADDRESS.test(value)) return undefined
  try {
    return Buffer.from(decodeAccountID(value)).toString('hex').toUpperCase()
  } catch {
    return undefined
  }
}
