// One signer's approval of a multisigned request: a blob signed for multisigning (SigningPubKey empty, one entry in
// Signers, the signer's own), over exactly the transaction the request holds.
import { unprocessable } from '../../../platform/errors.js'
import { SIGNED_FIELD } from '../verify/signed-blob.js'
import { verifySignedTransaction } from '../verify/verify-signed-transaction.js'

/** Fields a single signer's wallet adds; in a multisigned request they are fixed at creation, so none may be added. */
const FIXED_AT_CREATION = ['Fee', 'Sequence', 'LastLedgerSequence', 'NetworkID', 'TicketSequence'] as const

export interface MultisignSignature {
  /** The signer's account, from its Signers entry. */
  account: string
  /** The signer's blob, upper-case hex. */
  signedBlob: string
}

/** Throws a 422 naming the field on anything but one valid signature over the requested transaction. */
export function verifyMultisignSignature(requested: Record<string, unknown>, signedBlobHex: string): MultisignSignature {
  const verified = verifySignedTransaction(requested, signedBlobHex)
  if (!verified.multisigned) {
    throw unprocessable(
      [{ field: `${SIGNED_FIELD}.SigningPubKey`, message: 'must be empty: this request is multisigned, sign it for multisigning' }],
      'The signed transaction does not verify',
    )
  }
  if (verified.signerAccounts.length !== 1) {
    throw unprocessable(
      [{ field: `${SIGNED_FIELD}.Signers`, message: 'must hold exactly one entry: each signer approves with their own signature' }],
      'The signed transaction does not verify',
    )
  }
  const added = FIXED_AT_CREATION.filter((name) => Object.hasOwn(verified.transaction, name) && !Object.hasOwn(requested, name))
  if (added.length > 0) {
    throw unprocessable(
      added.map((name) => ({
        field: `${SIGNED_FIELD}.${name}`,
        message: 'must be absent: every signer signs the transaction exactly as requested',
      })),
      'The signed transaction does not verify',
    )
  }
  // A single signer's wallet may add Flags (0, or the tfFullyCanonicalSig bit); signers of one transaction must sign
  // the same bytes, or their signatures could never be combined.
  if (verified.transaction.Flags !== requested.Flags) {
    throw unprocessable(
      [
        {
          field: `${SIGNED_FIELD}.Flags`,
          message: `must be ${requested.Flags === undefined ? 'absent' : requested.Flags}: every signer signs the transaction exactly as requested`,
        },
      ],
      'The signed transaction does not verify',
    )
  }
  return { account: verified.signerAccounts[0] as string, signedBlob: verified.txBlob }
}
