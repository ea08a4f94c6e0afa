// A multisigned request (options.multisign): the signer list read from the ledger at creation, and each signer's
// signature or rejection as it arrives. Pure functions over one JSON value kept on the payload's row, so that every
// change is one compare-and-set of that row, on SQLite and PostgreSQL alike (docs/signing.md, "Multisigned requests").
import { conflict, unprocessable } from '../../../platform/errors.js'
import { SIGNED_FIELD } from '../verify/signed-blob.js'
import { signedWeight } from './view.js'

/** The ledger allows 32 entries in a SignerList (the ExpandedSignerList amendment). */
export const MAX_SIGNER_ENTRIES = 32

export interface SignerList {
  quorum: number
  entries: Array<{ account: string; weight: number }>
}

export interface MultisignSigner {
  account: string
  weight: number
  /** The signer's own blob: the requested transaction with one entry in Signers. Null until signed. */
  signedBlob: string | null
  signedAtMs: number | null
  rejectedAtMs: number | null
  walletAdapter: string | null
}

export interface MultisignState {
  quorum: number
  signers: MultisignSigner[]
}

export function newMultisignState(list: SignerList): MultisignState {
  return {
    quorum: list.quorum,
    signers: list.entries.map(({ account, weight }) => ({
      account,
      weight,
      signedBlob: null,
      signedAtMs: null,
      rejectedAtMs: null,
      walletAdapter: null,
    })),
  }
}

export function hasQuorum(state: MultisignState): boolean {
  return signedWeight(state) >= state.quorum
}

/** Whether the signers who have neither signed nor rejected can still bring the weight to the quorum. */
export function quorumReachable(state: MultisignState): boolean {
  const possible = state.signers.reduce((sum, signer) => sum + (signer.rejectedAtMs === null ? signer.weight : 0), 0)
  return possible >= state.quorum
}

/**
 * Records one signer's verified signature. Refuses a signer not on the list, a second answer from the same signer,
 * and any signature once the quorum is reached (the request is then being resolved with the signatures it has).
 */
export function withSignature(
  state: MultisignState,
  signature: { account: string; signedBlob: string; walletAdapter: string; nowMs: number },
): MultisignState {
  if (hasQuorum(state)) throw conflict('This request already has the signatures its quorum needs')
  const signer = findSigner(state, signature.account)
  if (signer.signedBlob !== null) {
    throw unprocessable([{ field: SIGNED_FIELD, message: `${signature.account} has already signed this request` }], 'Already signed')
  }
  if (signer.rejectedAtMs !== null) {
    throw unprocessable([{ field: SIGNED_FIELD, message: `${signature.account} has rejected this request` }], 'Already rejected')
  }
  return replaceSigner(state, {
    ...signer,
    signedBlob: signature.signedBlob,
    signedAtMs: signature.nowMs,
    walletAdapter: signature.walletAdapter,
  })
}

/** Takes a signature back: the combined transaction it completed was refused by the ledger. */
export function withoutSignature(state: MultisignState, account: string): MultisignState {
  const signer = findSigner(state, account)
  return replaceSigner(state, { ...signer, signedBlob: null, signedAtMs: null, walletAdapter: null })
}

export function withRejection(
  state: MultisignState,
  rejection: { account: string; walletAdapter: string | null; nowMs: number },
): MultisignState {
  if (hasQuorum(state)) throw conflict('This request already has the signatures its quorum needs')
  const signer = findSigner(state, rejection.account, 'signerAccount')
  if (signer.signedBlob !== null || signer.rejectedAtMs !== null) {
    throw unprocessable([{ field: 'signerAccount', message: `${rejection.account} has already answered this request` }], 'Already answered')
  }
  return replaceSigner(state, { ...signer, rejectedAtMs: rejection.nowMs, walletAdapter: rejection.walletAdapter })
}

function findSigner(state: MultisignState, account: string, field = `${SIGNED_FIELD}.Signers[0].Signer.Account`): MultisignSigner {
  const signer = state.signers.find((entry) => entry.account === account)
  if (signer === undefined) {
    throw unprocessable([{ field, message: `${account} is not on the signer list of this request's account` }], 'Not a signer')
  }
  return signer
}

function replaceSigner(state: MultisignState, signer: MultisignSigner): MultisignState {
  return { ...state, signers: state.signers.map((entry) => (entry.account === signer.account ? signer : entry)) }
}
