// Combining the signatures of a multisigned request (kept apart from model.ts, which the pages load: xrpl stays out of them).
import { unprocessable } from '../../../platform/errors.js'
import { loadOnDemand } from '../../../platform/load-on-demand.js'
import type { MultisignState } from './model.js'

/**
 * The signatures combined into one transaction, Signers sorted as the ledger requires (by account ID), with xrpl's
 * own `multisign`, which also refuses blobs that are not the same transaction. xrpl.js is loaded on the first
 * combination: no other path of a service without an XRPL node needs it.
 */
export function combineSignatures(state: MultisignState): string {
  const blobs = state.signers.flatMap((signer) => (signer.signedBlob === null ? [] : [signer.signedBlob]))
  try {
    return loadOnDemand<typeof import('xrpl')>('xrpl').multisign(blobs).toUpperCase()
  } catch (error) {
    // Each blob was verified against the request, so this should not happen; if it does, it is a 422 (the completing
    // signature is taken back), never a 500 that every later approval of the request would repeat.
    throw unprocessable(
      [{ field: 'signedTransaction', message: `cannot be combined with the signatures collected: ${(error as Error).message}` }],
      'The signatures cannot be combined',
    )
  }
}
