// Combining the signatures of a multisigned request (kept apart from model.ts, which the pages load: xrpl stays out of them).
import { multisign } from 'xrpl'
import type { MultisignState } from './model.js'

/**
 * The signatures combined into one transaction, Signers sorted as the ledger requires (by account ID), with xrpl's
 * own `multisign`, which also refuses blobs that are not the same transaction.
 */
export function combineSignatures(state: MultisignState): string {
  const blobs = state.signers.flatMap((signer) => (signer.signedBlob === null ? [] : [signer.signedBlob]))
  return multisign(blobs).toUpperCase()
}
