// What a wallet is given to sign, taken from the request the same way by every adapter.
import type { SignRequest } from '../api.js'

/** The requested transaction, without an empty SigningPubKey (requests may carry one; the wallet sets its own). */
export function transactionToSign(request: SignRequest): Record<string, unknown> {
  if (request.transaction === undefined) throw new Error('This request carries no transaction to sign')
  const { SigningPubKey, ...rest } = request.transaction
  return SigningPubKey === '' || SigningPubKey === undefined ? rest : request.transaction
}

/** The text whose UTF-8 bytes are signed: the message for signMessage, the challenge for connect. */
export function textToSign(request: SignRequest): string {
  const text = request.type === 'connect' ? request.challenge : request.message
  if (text === undefined)
    throw new Error(request.type === 'connect' ? 'This request carries no challenge to sign' : 'This request carries no message to sign')
  return text
}

/** UTF-8 bytes as upper-case hex: the form ripple-keypairs and the wallets sign. */
export function utf8ToHex(text: string): string {
  return Array.from(new TextEncoder().encode(text), (byte) => byte.toString(16).padStart(2, '0'))
    .join('')
    .toUpperCase()
}
