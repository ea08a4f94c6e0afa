// How a multisigned request's progress is shown (reads, live stream, webhook bodies, the signing page). Kept free of
// the signing libraries: the pages load it.
import type { MultisignState } from './model.js'

/** What reads, the live stream and webhook bodies show: who is on the list, who signed, never the signatures. */
export interface MultisignView {
  quorum: number
  /** The weight of the signatures collected so far. */
  weight: number
  signers: Array<{ account: string; weight: number; signed: boolean; signedAt: string | null; rejectedAt: string | null }>
}

export function toMultisignView(state: MultisignState, toIso: (ms: number) => string): MultisignView {
  return {
    quorum: state.quorum,
    weight: signedWeight(state),
    signers: state.signers.map((signer) => ({
      account: signer.account,
      weight: signer.weight,
      signed: signer.signedBlob !== null,
      signedAt: signer.signedAtMs === null ? null : toIso(signer.signedAtMs),
      rejectedAt: signer.rejectedAtMs === null ? null : toIso(signer.rejectedAtMs),
    })),
  }
}

/** The weight of the signatures collected so far. */
export function signedWeight(state: MultisignState): number {
  return state.signers.reduce((sum, signer) => sum + (signer.signedBlob === null ? 0 : signer.weight), 0)
}
