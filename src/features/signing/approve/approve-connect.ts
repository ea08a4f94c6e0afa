// Approving a connect payload: a signature over its challenge, the connect transaction (wallets that sign only
// transactions: Ledger), or a Xaman SignIn fetched by the service from Xaman.
import { decode } from 'ripple-binary-codec'
import type { Payload } from '../../payloads/model.js'
import type { SigningDeps } from '../deps.js'
import { verifyConnectTransaction } from '../verify/connect-challenge.js'
import { textProofKey, transactionProofKey, xamanSignInProofKey } from '../verify/proof-key.js'
import { SIGNED_FIELD } from '../verify/signed-blob.js'
import { verifyMessageSignature } from '../verify/verify-message-signature.js'
import { verifyXamanSignIn } from '../verify/verify-xaman-sign-in.js'
import { type Approval, requireFields } from './approval.js'
import { resolveProven } from './signer-rules.js'

export async function approveConnect(deps: SigningDeps, payload: Payload, approval: Approval): Promise<Payload> {
  const challenge = payload.challenge as string
  if (approval.signedTransaction !== undefined) {
    const { signedTransaction } = requireFields(approval, ['signedTransaction'], payload.type)
    const verified = verifyConnectTransaction(challenge, signedTransaction)
    const transaction = decode(verified.txBlob) as Record<string, unknown>
    const signed = {
      walletAdapter: approval.walletAdapter,
      signerAddress: verified.signerAddress,
      publicKey: verified.publicKey,
      signature: (transaction.TxnSignature as string).toUpperCase(),
      txBlob: verified.txBlob,
      proofKey: transactionProofKey(transaction),
    }
    return resolveProven(deps, payload, signed, `${SIGNED_FIELD}.SigningPubKey`)
  }
  const { publicKey, signature } = requireFields(approval, ['publicKey', 'signature'], payload.type)
  const verified = verifyMessageSignature(challenge, publicKey, signature)
  return resolveProven(deps, payload, {
    walletAdapter: approval.walletAdapter,
    ...verified,
    proofKey: textProofKey(verified.publicKey, challenge),
  })
}

/** A Xaman SignIn, bound to the payload because the service created the Xaman request and fetched its result. */
export async function approveConnectWithXamanSignIn(
  deps: SigningDeps,
  payload: Payload,
  answer: { xamanUuid: string; hex: string; account: string | null },
): Promise<Payload> {
  const verified = verifyXamanSignIn(answer.hex, answer.account)
  const proofKey = xamanSignInProofKey(answer.xamanUuid)
  return resolveProven(deps, payload, { walletAdapter: 'xaman', ...verified, proofKey }, 'xaman.response.hex')
}
