// Approving a sign or signAndSubmit payload: the signed blob against the requested transaction, the ledger's word on
// who may sign for the account, and for signAndSubmit the submission.
import { unprocessable } from '../../../platform/errors.js'
import type { Payload } from '../../payloads/model.js'
import type { SigningDeps } from '../deps.js'
import { couldPassAsConnectTransaction } from '../verify/connect-challenge.js'
import { transactionProofKey } from '../verify/proof-key.js'
import { verifySignedTransaction } from '../verify/verify-signed-transaction.js'
import { type Approval, requireFields } from './approval.js'
import { approveMultisigned } from './approve-multisigned.js'
import { assertAllowedSigner, checkAuthority, type ProvenResolution } from './signer-rules.js'
import { submitAndResolve } from './submit-transaction.js'

export async function approveTransaction(deps: SigningDeps, payload: Payload, approval: Approval): Promise<Payload> {
  const { signedTransaction } = requireFields(approval, ['signedTransaction'], payload.type)
  if (payload.multisign !== null) return approveMultisigned(deps, payload, approval.walletAdapter, signedTransaction)
  const requested = payload.transaction as Record<string, unknown>
  const verified = verifySignedTransaction(requested, signedTransaction)
  // A request created before such transactions were refused at creation: signed, it would be a sign-in elsewhere. The
  // signed transaction is looked at, as the codec wrote it, so that the memo type with one hex digit more
  // ("…636F6E6E656374A", from before odd-length hex was refused), which the codec signs as the memo type itself, is
  // caught too; a request that carries the memo as written carries it in every transaction that matches it.
  if (couldPassAsConnectTransaction(verified.transaction)) {
    throw unprocessable([
      {
        field: 'transaction.Memos',
        message: 'carry the countersign/connect memo, so its signature would sign in elsewhere: this request cannot be signed',
      },
    ])
  }
  const signed: ProvenResolution = {
    walletAdapter: approval.walletAdapter,
    signerAddress: verified.signerAddress,
    txHash: verified.txHash,
    txBlob: verified.txBlob,
    proofKey: transactionProofKey(verified.transaction),
  }
  assertAllowedSigner(payload, signed.signerAddress)
  await checkAuthority(deps, verified)
  await deps.payloads.assertProofUnused(signed.proofKey)
  if (payload.type === 'sign') return deps.payloads.resolveSigned(payload.uuid, signed)
  return submitAndResolve(deps, payload, verified, signed)
}
