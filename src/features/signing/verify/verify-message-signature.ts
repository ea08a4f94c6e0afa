// Verifies a signature over a text message (signMessage payloads and connect challenges).
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { type FieldError, unprocessable } from '../../../platform/errors.js'
import { addressOfPublicKey, isPublicKeyHex, isSignatureHex, verifySignatureHex } from './signed-blob.js'

export interface VerifiedMessageSignature {
  /** The account the public key is the master key of. */
  signerAddress: string
  /** Upper-case hex. */
  publicKey: string
  /** Upper-case hex. */
  signature: string
}

/**
 * The signature is over the UTF-8 bytes of the message, as ripple-keypairs `sign(hex(message), privateKey)`
 * produces: secp256k1 over their SHA-512Half, Ed25519 over the bytes themselves.
 * Details name `publicKey` and `signature`, under `fieldPrefix.` when given. Any malformed input is a 422.
 */
export function verifyMessageSignature(
  message: string,
  publicKeyHex: string,
  signatureHex: string,
  fieldPrefix?: string,
): VerifiedMessageSignature {
  const field = (name: string) => (fieldPrefix ? `${fieldPrefix}.${name}` : name)
  const errors: FieldError[] = []
  if (!isPublicKeyHex(publicKeyHex)) {
    errors.push({
      field: field('publicKey'),
      message: 'must be a 33-byte public key in hex: 02 or 03 and 32 bytes (secp256k1), or ED and 32 bytes (Ed25519)',
    })
  }
  if (!isSignatureHex(signatureHex)) {
    errors.push({ field: field('signature'), message: 'must be a signature in hex (at most 72 bytes)' })
  }
  if (typeof message !== 'string') errors.push({ field: field('message'), message: 'must be a string' })
  if (errors.length > 0) throw unprocessable(errors, 'The signature does not verify')
  if (!verifySignatureHex(bytesToHex(utf8ToBytes(message)), signatureHex, publicKeyHex)) {
    throw unprocessable(
      [{ field: field('signature'), message: 'does not verify for this message and public key' }],
      'The signature does not verify',
    )
  }
  const publicKey = publicKeyHex.toUpperCase()
  return { signerAddress: addressOfPublicKey(publicKey), publicKey, signature: signatureHex.toUpperCase() }
}
