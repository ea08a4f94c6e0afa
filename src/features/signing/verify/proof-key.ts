// What identifies a proof, so that it resolves one payload only, ever: the content signed and the key that signed it,
// not the signature bytes (a secp256k1 signature has a second valid form, and a wallet may sign the same content
// twice). Transactions, connect transactions and Xaman sign-ins share one namespace; texts (signMessage and the
// connect challenge) another, so a signature over a text is one proof whichever kind of request asked for it.
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { encode, encodeForSigning } from 'ripple-binary-codec'

/**
 * A signed transaction (or sign-in) without its signatures: its signing encoding, which holds every field, Account,
 * Sequence and SigningPubKey included. The same transaction signed again (another signature, another multisigner) is
 * the same proof: the ledger would apply it once.
 */
export function transactionProofKey(transaction: Record<string, unknown>): string {
  let content: string
  try {
    content = encodeForSigning(transaction)
  } catch {
    // A sign-in lacks a TransactionType; its whole encoding still names exactly what was signed.
    content = encode(transaction)
  }
  return `tx:${hash(content)}`
}

/** A signature over a text: the signing key and the text's UTF-8 bytes. */
export function textProofKey(publicKeyHex: string, text: string): string {
  return `text:${hash(`${publicKeyHex.toUpperCase()}:${bytesToHex(utf8ToBytes(text)).toUpperCase()}`)}`
}

function hash(value: string): string {
  return bytesToHex(sha256(utf8ToBytes(value)))
}
