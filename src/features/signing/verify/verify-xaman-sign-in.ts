// Verifies the result of a Xaman SignIn request (connect with Xaman): a signed pseudo-transaction without a
// TransactionType, carrying only Account, Flags, Sequence, Fee and the signature.
import { unprocessable } from '../../../platform/errors.js'
import { addressOfPublicKey, checkSingleSignature, decodeCanonicalBlob } from './signed-blob.js'

export interface VerifiedXamanSignIn {
  signerAddress: string
  /** Upper-case hex. */
  publicKey: string
  /** The TxnSignature of the blob, upper-case hex. */
  signature: string
  /** Upper-case hex. */
  txBlob: string
}

const FIELD = 'xaman.response.hex'

/**
 * The blob says nothing of the payload it answers: it is bound to the payload only because the service created
 * the Xaman request itself and fetched the result from Xaman with its own credentials. What is checked here is that
 * it is a sign-in (never a transaction the ledger would apply), that it is signed by the master key of its Account,
 * and that this Account is the one Xaman reports. A RegularKey is not accepted, as for every connect proof.
 */
export function verifyXamanSignIn(signedBlobHex: string, reportedAccount: string | null): VerifiedXamanSignIn {
  const fail = (message: string) => unprocessable([{ field: FIELD, message }], 'The Xaman sign-in does not verify')
  const { transaction, txBlob } = decodeCanonicalBlob(signedBlobHex, fail)
  if (Object.hasOwn(transaction, 'TransactionType')) throw fail('is a transaction, not a sign-in')
  const account = transaction.Account
  if (typeof account !== 'string') throw fail('has no Account')
  if (reportedAccount !== null && reportedAccount !== account) throw fail(`is signed for ${account}, but Xaman reports ${reportedAccount}`)
  if (checkSingleSignature(transaction).length > 0) throw fail('carries a signature that does not verify against its SigningPubKey')
  const publicKey = (transaction.SigningPubKey as string).toUpperCase()
  if (addressOfPublicKey(publicKey) !== account) throw fail(`is not signed by the master key of ${account}`)
  return { signerAddress: account, publicKey, signature: (transaction.TxnSignature as string).toUpperCase(), txBlob }
}
