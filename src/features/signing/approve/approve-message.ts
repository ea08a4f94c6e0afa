// Approving a signMessage payload: a signature over the UTF-8 bytes of its message.
import { unprocessable } from '../../../platform/errors.js'
import type { Payload } from '../../payloads/model.js'
import type { SigningDeps } from '../deps.js'
import { couldPassAsConnectChallenge } from '../verify/connect-challenge.js'
import { textProofKey } from '../verify/proof-key.js'
import { verifyMessageSignature } from '../verify/verify-message-signature.js'
import { type Approval, requireFields } from './approval.js'
import { resolveProven } from './signer-rules.js'

export async function approveMessage(deps: SigningDeps, payload: Payload, approval: Approval): Promise<Payload> {
  const { publicKey, signature } = requireFields(approval, ['publicKey', 'signature'], payload.type)
  const message = payload.message as string
  // Created before such messages were refused at creation: its signature would be a sign-in elsewhere.
  if (couldPassAsConnectChallenge(message)) {
    throw unprocessable([
      {
        field: 'message',
        message: 'reads like a connect challenge, so its signature would sign in elsewhere: this request cannot be signed',
      },
    ])
  }
  const verified = verifyMessageSignature(message, publicKey, signature)
  return resolveProven(deps, payload, {
    walletAdapter: approval.walletAdapter,
    ...verified,
    proofKey: textProofKey(verified.publicKey, message),
  })
}
