// What identifies a proof, so that it resolves one payload only, ever: the content signed and the key that signed it,
// not the signature bytes (a secp256k1 signature has a second valid form, and a wallet may sign the same content
// twice). Transactions and connect transactions share one namespace; texts (signMessage and the connect challenge)
// another, so a signature over a text is one proof whichever kind of request asked for it. A Xaman sign-in is known by
// the Xaman request that answered it (xamanSignInProofKey).
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { encodeForSigning } from 'ripple-binary-codec'

/**
 * A signed transaction without its signatures: its signing encoding, which holds every field, Account,
 * Sequence and SigningPubKey included. The same transaction signed again (another signature, another multisigner) is
 * the same proof: the ledger would apply it once.
 */
export function transactionProofKey(transaction: Record<string, unknown>): string {
  return `tx:${hash(encodeForSigning(transaction))}`
}

/**
 * A Xaman SignIn: the Xaman request that answered it, not its content. A SignIn holds nothing fresh (Flags, Sequence,
 * Fee and Account: the same at each sign-in of an account), so keyed by its content an account could sign in with
 * Xaman once only, ever. It is bound to its payload by the Xaman request, which the service created for that payload
 * alone and whose result it read from Xaman itself.
 */
export function xamanSignInProofKey(xamanUuid: string): string {
  return `xaman:${xamanUuid}`
}

/** A signature over a text: the signing key and the text's UTF-8 bytes. */
export function textProofKey(publicKeyHex: string, text: string): string {
  return `text:${hash(`${publicKeyHex.toUpperCase()}:${bytesToHex(utf8ToBytes(text)).toUpperCase()}`)}`
}

function hash(value: string): string {
  return bytesToHex(sha256(utf8ToBytes(value)))
}
