// Decoding and checking a signed transaction blob from a wallet; shared by transaction and connect verification.
// Pure and browser-safe: no I/O, no Node-only APIs.
import { decode, encode, encodeForSigning } from 'ripple-binary-codec'
import { BinaryParser } from 'ripple-binary-codec/dist/serdes/binary-parser.js'
import { deriveAddress, verify } from 'ripple-keypairs'
import { type FieldError, unprocessable } from '../../../platform/errors.js'
import { FLAGS_MESSAGE, isFlagsValue, SIGNATURE_FIELDS, TF_FULLY_CANONICAL_SIG } from '../../../platform/xrpl/encode-transaction.js'

/** The approve body field that carries the blob; every detail about the signed transaction names it. */
export const SIGNED_FIELD = 'signedTransaction'
/** The payload field that holds the requested transaction. */
const REQUESTED_FIELD = 'transaction'

/**
 * Largest blob accepted, in bytes. A transaction signed here is a few hundred bytes; 32 signers and the
 * ledger's 1 KB memo limit still fit in a few KB. The bound keeps decoding cheap on hostile input.
 */
export const MAX_SIGNED_BLOB_BYTES = 64 * 1024

/**
 * The ledger accepts at most this many signers on a multisigned transaction (signer lists hold 32 entries since the
 * ExpandedSignerList amendment).
 */
export const MAX_SIGNERS = 32

/**
 * Most fields a blob may hold, nested ones included. Decoding costs about the same per field whatever its size, and
 * tens of thousands of tiny fields fit in 64 KiB: this bound, checked before decoding, keeps a hostile blob as cheap
 * as an honest one. 32 signers take 128 fields; a transaction with the ledger's 1 KB of memos and every other field
 * stays far below.
 */
export const MAX_BLOB_FIELDS = 400

const TF_PARTIAL_PAYMENT = 0x00020000

const HEX = /^[0-9A-Fa-f]*$/
const PUBLIC_KEY_HEX = /^(0[23][0-9A-Fa-f]{64}|[Ee][Dd][0-9A-Fa-f]{64})$/
/** A DER secp256k1 signature is at most 72 bytes; an Ed25519 signature is 64. */
const MAX_SIGNATURE_BYTES = 72

export interface DecodedBlob {
  transaction: Record<string, unknown>
  /** The blob as upper-case hex. */
  txBlob: string
}

/** Decodes a signed blob, or throws a 422 naming the problem; never throws another error type. */
export function decodeSignedBlob(signedBlobHex: unknown): DecodedBlob {
  const problem = (message: string) => unprocessable([{ field: SIGNED_FIELD, message }], 'The signed transaction cannot be decoded')
  const decoded = decodeCanonicalBlob(signedBlobHex, problem)
  if (typeof decoded.transaction.TransactionType !== 'string') throw problem('is not a transaction: it has no TransactionType')
  return decoded
}

/**
 * Decodes a blob in the ledger's binary encoding (a transaction or a sign-in), refusing anything but bounded hex in
 * canonical form; every refusal is `problem(message)`, the message completing a sentence about the blob.
 */
export function decodeCanonicalBlob(hex: unknown, problem: (message: string) => Error): DecodedBlob {
  if (typeof hex !== 'string' || hex === '') throw problem('must be a non-empty hex string')
  if (hex.length > MAX_SIGNED_BLOB_BYTES * 2) throw problem(`must be at most ${MAX_SIGNED_BLOB_BYTES} bytes`)
  if (hex.length % 2 !== 0 || !HEX.test(hex)) throw problem('must be hex with an even number of digits')
  const txBlob = hex.toUpperCase()
  const tooLarge = countFieldsWithin(txBlob)
  if (tooLarge !== undefined) throw problem(tooLarge)
  let transaction: Record<string, unknown>
  try {
    transaction = decode(txBlob) as Record<string, unknown>
  } catch {
    throw problem('is not a valid XRP Ledger binary encoding (truncated or corrupt)')
  }
  // A blob that does not re-encode to itself (fields out of order, trailing bytes) could be read differently by
  // the ledger than by this check; only canonical encodings are compared and signed over.
  let reencoded: string
  try {
    reencoded = encode(transaction)
  } catch {
    throw problem('is not a valid XRP Ledger binary encoding')
  }
  if (reencoded.toUpperCase() !== txBlob) throw problem('is not in canonical binary form')
  return { transaction, txBlob }
}

/**
 * Walks the blob's fields without building them, counting every field (nested ones included) and the top-level
 * Signers. Returns what is over a bound, as the end of a sentence about the blob, or undefined; a blob that does not
 * parse is left for the decoder to refuse.
 */
function countFieldsWithin(txBlob: string): string | undefined {
  const parser = new BinaryParser(txBlob)
  let fields = 0
  let signers = 0
  /** Reads fields until the end (depth 0) or the object's or array's end marker. */
  const walk = (depth: number, inSigners: boolean): string | undefined => {
    while (!parser.end()) {
      const field = parser.readField()
      if (field.name === 'ObjectEndMarker' || field.name === 'ArrayEndMarker') return undefined
      if (++fields > MAX_BLOB_FIELDS) return `holds more than ${MAX_BLOB_FIELDS} fields`
      if (inSigners && ++signers > MAX_SIGNERS)
        return `lists more than ${MAX_SIGNERS} Signers; the XRP Ledger accepts at most ${MAX_SIGNERS}`
      if (field.type.name === 'STObject' || field.type.name === 'STArray') {
        const over = walk(depth + 1, depth === 0 && field.name === 'Signers')
        if (over !== undefined) return over
      } else {
        parser.readFieldValue(field)
      }
    }
    return undefined
  }
  try {
    return walk(0, false)
  } catch {
    return undefined
  }
}

/**
 * Compares a signed transaction with the requested one by binary encoding, so that equal values written
 * differently ("1.50" and "1.5" of an issued currency, memo hex case) are equal.
 * Every requested field must be present and equal; the signed transaction may carry other fields only when
 * named in `walletMayAdd`. Flags follow their own rule, see compareFlags.
 */
export function compareWithRequested(
  requested: Record<string, unknown>,
  signed: Record<string, unknown>,
  walletMayAdd: ReadonlySet<string>,
): FieldError[] {
  const errors: FieldError[] = []
  for (const [name, requestedValue] of Object.entries(requested)) {
    // The signer's own fields, never the request's: a requested empty SigningPubKey means "the wallet's key".
    if (name === 'Flags' || SIGNATURE_FIELDS.has(name)) continue
    const requestedEncoding = encodeField(name, requestedValue)
    if (requestedEncoding === null) {
      errors.push({ field: `${REQUESTED_FIELD}.${name}`, message: `${name} cannot be encoded as a ledger transaction field` })
      continue
    }
    if (!Object.hasOwn(signed, name)) {
      errors.push({ field: `${SIGNED_FIELD}.${name}`, message: `${name} was requested but is missing from the signed transaction` })
    } else if (encodeField(name, signed[name]) !== requestedEncoding) {
      errors.push({ field: `${SIGNED_FIELD}.${name}`, message: `${name} differs from the requested value` })
    }
  }
  for (const name of Object.keys(signed)) {
    if (name === 'Flags' || Object.hasOwn(requested, name) || walletMayAdd.has(name)) continue
    errors.push({ field: `${SIGNED_FIELD}.${name}`, message: `${name} was not requested; a wallet may not add it` })
  }
  errors.push(...compareFlags(requested.Flags, signed.Flags, signed.TransactionType))
  return errors
}

/**
 * A wallet may add the Flags field, but no flag bit beyond the requested ones, and may not clear a requested
 * bit. The one exception is tfFullyCanonicalSig, which older libraries add: since the RequireFullyCanonicalSig
 * amendment every signature must be fully canonical anyway, so that bit changes nothing and is ignored both ways.
 */
function compareFlags(requestedFlags: unknown, signedFlags: unknown, transactionType: unknown): FieldError[] {
  const requested = requestedFlags ?? 0
  if (!isFlagsValue(requested)) {
    return [{ field: `${REQUESTED_FIELD}.Flags`, message: FLAGS_MESSAGE }]
  }
  const signed = typeof signedFlags === 'number' ? signedFlags : 0
  const ignoringCanonical = (flags: number) => (flags & ~TF_FULLY_CANONICAL_SIG) >>> 0
  const added = (ignoringCanonical(signed) & ~ignoringCanonical(requested)) >>> 0
  const cleared = (ignoringCanonical(requested) & ~ignoringCanonical(signed)) >>> 0
  const errors: FieldError[] = []
  if (added !== 0) {
    const partialPayment = transactionType === 'Payment' && (added & TF_PARTIAL_PAYMENT) !== 0 ? ', including tfPartialPayment' : ''
    errors.push({
      field: `${SIGNED_FIELD}.Flags`,
      message: `Flags set ${flagsHex(added)}${partialPayment}, which was not requested; a wallet may not add flags`,
    })
  }
  if (cleared !== 0) {
    errors.push({ field: `${SIGNED_FIELD}.Flags`, message: `Flags clear ${flagsHex(cleared)}, which was requested` })
  }
  return errors
}

function flagsHex(flags: number): string {
  return `0x${flags.toString(16).toUpperCase().padStart(8, '0')}`
}

/** The binary encoding of one field, or null when it is not a serializable ledger field or the value does not encode. */
function encodeField(name: string, value: unknown): string | null {
  try {
    // Unknown field names are dropped by the encoder, so an empty result means "not a ledger field".
    const encoded = encode({ [name]: value })
    return encoded === '' ? null : encoded
  } catch {
    return null
  }
}

/** A 33-byte public key in hex: 02/03 + 32 bytes (secp256k1) or ED + 32 bytes (Ed25519). */
export function isPublicKeyHex(value: unknown): value is string {
  return typeof value === 'string' && PUBLIC_KEY_HEX.test(value)
}

/** A plausibly sized signature in hex; whether it verifies is for verifySignatureHex. */
export function isSignatureHex(value: unknown): value is string {
  return (
    typeof value === 'string' && value.length > 0 && value.length <= MAX_SIGNATURE_BYTES * 2 && value.length % 2 === 0 && HEX.test(value)
  )
}

/** Verifies a signature over the given bytes (hex); false for any malformed input, never a throw. */
export function verifySignatureHex(messageHex: string, signatureHex: string, publicKeyHex: string): boolean {
  if (!isPublicKeyHex(publicKeyHex) || !isSignatureHex(signatureHex)) return false
  try {
    return verify(messageHex, signatureHex.toUpperCase(), publicKeyHex.toUpperCase())
  } catch {
    return false
  }
}

/** The classic address a public key derives (the account it is the master key of). */
export function addressOfPublicKey(publicKeyHex: string): string {
  return deriveAddress(publicKeyHex.toUpperCase())
}

/** Checks a single signature: SigningPubKey well formed and TxnSignature valid over the signing encoding. */
export function checkSingleSignature(transaction: Record<string, unknown>): FieldError[] {
  const { SigningPubKey: signingPubKey, TxnSignature: txnSignature } = transaction
  if (!isPublicKeyHex(signingPubKey)) {
    return [{ field: `${SIGNED_FIELD}.SigningPubKey`, message: 'must be a 33-byte secp256k1 or Ed25519 public key' }]
  }
  if (!isSignatureHex(txnSignature)) {
    return [{ field: `${SIGNED_FIELD}.TxnSignature`, message: 'is missing or is not a signature' }]
  }
  let signingData: string
  try {
    signingData = encodeForSigning(transaction)
  } catch {
    return [{ field: SIGNED_FIELD, message: 'cannot be encoded for signing' }]
  }
  if (!verifySignatureHex(signingData, txnSignature, signingPubKey)) {
    return [{ field: `${SIGNED_FIELD}.TxnSignature`, message: 'does not verify against SigningPubKey' }]
  }
  return []
}
