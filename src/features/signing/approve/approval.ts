// What a wallet sends to approve (POST /api/v1/sign/{uuid}/approve), and the fields each kind of approval needs.
import { type FieldError, unprocessable } from '../../../platform/errors.js'
import type { WalletAdapterName } from '../view.js'

export interface Approval {
  walletAdapter: WalletAdapterName
  signedTransaction?: string
  publicKey?: string
  signature?: string
}

/** The approval fields a payload type needs, present; the fields of the other kind of approval, absent. */
export function requireFields<K extends 'signedTransaction' | 'publicKey' | 'signature'>(
  approval: Approval,
  needed: K[],
  type: string,
): Record<K, string> {
  const errors: FieldError[] = []
  for (const name of needed) {
    if (approval[name] === undefined) errors.push({ field: name, message: `is required to approve a ${type} request` })
  }
  for (const name of ['signedTransaction', 'publicKey', 'signature'] as const) {
    if (!(needed as string[]).includes(name) && approval[name] !== undefined) {
      errors.push({ field: name, message: `is not part of this approval: send ${needed.join(' and ')}` })
    }
  }
  if (errors.length > 0) throw unprocessable(errors)
  return Object.fromEntries(needed.map((name) => [name, approval[name]])) as Record<K, string>
}
