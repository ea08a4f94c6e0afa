// Approving a sign or signAndSubmit payload: the signed blob against the requested transaction, the ledger's word on
// who may sign for the account, and for signAndSubmit the submission.
import { unprocessable } from '../../../platform/errors.js'
import type { Payload } from '../../payloads/model.js'
import { askNode, requireNode, type SigningDeps } from '../deps.js'
import { couldPassAsConnectTransaction } from '../verify/connect-challenge.js'
import { transactionProofKey } from '../verify/proof-key.js'
import { SIGNED_FIELD } from '../verify/signed-blob.js'
import { type VerifiedTransaction, verifySignedTransaction } from '../verify/verify-signed-transaction.js'
import { type Approval, requireFields } from './approval.js'
import { approveMultisigned } from './approve-multisigned.js'
import { assertAllowedSigner, assertMasterKeyEnabled, type ProvenResolution } from './signer-rules.js'
import { submitAndResolve } from './submit-transaction.js'

export async function approveTransaction(deps: SigningDeps, payload: Payload, approval: Approval): Promise<Payload> {
  const { signedTransaction } = requireFields(approval, ['signedTransaction'], payload.type)
  if (payload.multisign !== null) return approveMultisigned(deps, payload, approval.walletAdapter, signedTransaction)
  const requested = payload.transaction as Record<string, unknown>
  // Created before such transactions were refused at creation: signed, it would be a sign-in elsewhere.
  if (couldPassAsConnectTransaction(requested)) {
    throw unprocessable([
      {
        field: 'transaction.Memos',
        message: 'carry the countersign/connect memo, so its signature would sign in elsewhere: this request cannot be signed',
      },
    ])
  }
  const verified = verifySignedTransaction(requested, signedTransaction)
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

/**
 * The ledger's word where the blob alone cannot say whether the signature speaks for the Account: a RegularKey, a
 * multisignature quorum, and (with a node configured) whether a master key that signed is still enabled.
 */
async function checkAuthority(deps: SigningDeps, verified: VerifiedTransaction): Promise<void> {
  const account = verified.signerAddress
  if (verified.requiresRegularKeyCheck) {
    const node = requireNode(deps, "check that the signing key is the account's RegularKey")
    if (!(await askNode(() => node.isRegularKey(account, verified.signingPubKey), deps.logger))) {
      throw unprocessable(
        [
          {
            field: `${SIGNED_FIELD}.SigningPubKey`,
            message: `is neither the master key nor the RegularKey of ${account} in the validated ledger`,
          },
        ],
        'The signed transaction does not verify',
      )
    }
  } else if (!verified.multisigned) {
    await assertMasterKeyEnabled(deps, account, `${SIGNED_FIELD}.SigningPubKey`)
  }
  if (verified.multisigned) {
    const node = requireNode(deps, "check the signers against the account's signer list")
    if (!(await askNode(() => node.hasSignerQuorum(account, verified.signerAccounts), deps.logger))) {
      throw unprocessable(
        [
          {
            field: `${SIGNED_FIELD}.Signers`,
            message: `${verified.signerAccounts.join(', ')} are not on the signer list of ${account} or do not reach its quorum`,
          },
        ],
        'The signed transaction does not verify',
      )
    }
    // Each signer signed with its master key (verifySignedTransaction): it must still be enabled.
    for (const [index, signer] of verified.signerAccounts.entries()) {
      await assertMasterKeyEnabled(deps, signer, `${SIGNED_FIELD}.Signers[${index}].SigningPubKey`)
    }
  }
}
