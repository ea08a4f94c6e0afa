// One signer's signature of a multisigned request (options.multisign): verified, recorded (payload.signature_added),
// and, when it completes the quorum, combined with the others into the transaction that resolves the request (and, for
// signAndSubmit, is submitted).
import { AppError } from '../../../platform/errors.js'
import type { Payload } from '../../payloads/model.js'
import type { SigningDeps } from '../deps.js'
import { combineSignatures } from '../multisign/combine.js'
import { hasQuorum, type MultisignState, withoutSignature, withSignature } from '../multisign/model.js'
import { verifyMultisignSignature } from '../multisign/verify-multisign-signature.js'
import { transactionProofKey } from '../verify/proof-key.js'
import { verifySignedTransaction } from '../verify/verify-signed-transaction.js'
import { assertAllowedSigner, checkAuthority, type ProvenResolution } from './signer-rules.js'
import { submitAndResolve } from './submit-transaction.js'

/** A request left at its quorum but pending (a crash, a refused submission) is completed by the next approval. */
export async function approveMultisigned(
  deps: SigningDeps,
  payload: Payload,
  walletAdapter: string,
  signedTransaction: string,
): Promise<Payload> {
  if (payload.multisign !== null && hasQuorum(payload.multisign)) return completeMultisigned(deps, payload, walletAdapter)
  const signature = verifyMultisignSignature(payload.transaction as Record<string, unknown>, signedTransaction)
  const recorded = await deps.payloads.changeMultisign(
    payload.uuid,
    (current, nowMs) => withSignature(current.multisign, { ...signature, walletAdapter, nowMs }),
    'payload.signature_added',
  )
  if (recorded.multisign === null || !hasQuorum(recorded.multisign)) return recorded
  try {
    return await completeMultisigned(deps, recorded, walletAdapter)
  } catch (error) {
    // The ledger refused the combined transaction: the signature that completed it is taken back, so that the
    // request shows what it still needs and this signer can sign again.
    if (error instanceof AppError && error.statusCode === 422) {
      await deps.payloads
        .changeMultisign(payload.uuid, (current) => withoutSignature(current.multisign, signature.account))
        .catch((undo: unknown) => deps.logger.warn({ err: undo, uuid: payload.uuid }, 'could not take back a multisignature'))
    }
    throw error
  }
}

async function completeMultisigned(deps: SigningDeps, payload: Payload, walletAdapter: string): Promise<Payload> {
  const txBlob = combineSignatures(payload.multisign as MultisignState)
  // The combined transaction is checked as any multisigned one: each signature against its signer.
  const verified = verifySignedTransaction(payload.transaction as Record<string, unknown>, txBlob)
  const signed: ProvenResolution = {
    walletAdapter,
    signerAddress: verified.signerAddress,
    txHash: verified.txHash,
    txBlob: verified.txBlob,
    proofKey: transactionProofKey(verified.transaction),
  }
  assertAllowedSigner(payload, signed.signerAddress)
  // The signer list kept at creation may have changed on the ledger since (a signer removed, the quorum raised): the
  // signers must reach the quorum of the list the ledger holds now, each with its master key still enabled.
  await checkAuthority(deps, verified)
  await deps.payloads.assertProofUnused(signed.proofKey)
  if (payload.type === 'sign') return deps.payloads.resolveSigned(payload.uuid, signed)
  return submitAndResolve(deps, payload, verified, signed)
}
