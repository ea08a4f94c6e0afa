// Verifies a wallet's signed transaction blob against the transaction a payload requested (sign, signAndSubmit).
import { encodeForMultisigning } from 'ripple-binary-codec'
import { hashes } from 'xrpl'
import { type FieldError, unprocessable } from '../../../platform/errors.js'
import {
  addressOfPublicKey,
  checkSingleSignature,
  compareWithRequested,
  decodeSignedBlob,
  isPublicKeyHex,
  isSignatureHex,
  SIGNED_FIELD,
  verifySignatureHex,
} from './signed-blob.js'

export interface VerifiedTransaction {
  transaction: Record<string, unknown>
  /** The signed blob, upper-case hex. */
  txBlob: string
  txHash: string
  /** The transaction's Account. */
  signerAddress: string
  /** The single signer's key; empty for a multisigned transaction. */
  signingPubKey: string
  multisigned: boolean
  /** The accounts that signed a multisigned transaction, in blob order; empty for a single signature. */
  signerAccounts: string[]
  /**
   * The single SigningPubKey does not derive the Account: the signature is only the account's if the key is
   * its RegularKey, which only the ledger knows (XrplNode.isRegularKey).
   */
  requiresRegularKeyCheck: boolean
}

/**
 * What a wallet may add to a requested transaction: what it needs to make it valid on the ledger and to sign
 * it. TicketSequence is absent on purpose: a ticket changes which sequence slot the transaction consumes, so a
 * wallet may use one only when the request says so. Account is added separately, only when not requested.
 * Flags have their own rule (signed-blob.ts).
 */
const WALLET_MAY_ADD: readonly string[] = ['Fee', 'Sequence', 'LastLedgerSequence', 'NetworkID', 'SigningPubKey', 'TxnSignature', 'Signers']

/** Throws a 422 with details on any mismatch, bad signature or malformed blob; never another error type. */
export function verifySignedTransaction(requested: Record<string, unknown>, signedBlobHex: string): VerifiedTransaction {
  const { transaction, txBlob } = decodeSignedBlob(signedBlobHex)
  const walletMayAdd = new Set(WALLET_MAY_ADD)
  if (!Object.hasOwn(requested, 'Account')) walletMayAdd.add('Account')
  const errors = compareWithRequested(requested, transaction, walletMayAdd)

  const account = transaction.Account
  if (typeof account !== 'string') {
    errors.push({ field: `${SIGNED_FIELD}.Account`, message: 'is missing: the transaction must name its account' })
    throw unprocessable(errors, 'The signed transaction does not verify')
  }
  const signingPubKey = transaction.SigningPubKey
  const multisigned = signingPubKey === '' && Object.hasOwn(transaction, 'Signers')
  let signerAccounts: string[] = []
  if (multisigned) {
    const checked = checkMultisignatures(transaction)
    errors.push(...checked.errors)
    signerAccounts = checked.signerAccounts
  } else if (Object.hasOwn(transaction, 'Signers')) {
    errors.push({
      field: `${SIGNED_FIELD}.Signers`,
      message: 'must be absent when SigningPubKey is set: a transaction is single-signed or multisigned',
    })
  } else {
    errors.push(...checkSingleSignature(transaction))
  }
  if (errors.length > 0) throw unprocessable(errors, 'The signed transaction does not verify')

  const singleKey = multisigned ? '' : (signingPubKey as string).toUpperCase()
  return {
    transaction,
    txBlob,
    txHash: hashes.hashSignedTx(txBlob),
    signerAddress: account,
    signingPubKey: singleKey,
    multisigned,
    signerAccounts,
    requiresRegularKeyCheck: !multisigned && addressOfPublicKey(singleKey) !== account,
  }
}

/**
 * Each Signer must sign the multisigning encoding for its own Account, with a key that derives that Account.
 * Signers using a regular key are refused: checking one would need a ledger lookup per signer, and a wallet
 * that multisigns for the service's users has no reason to use one. Whether the signers meet the Account's
 * signer list quorum is the ledger's to say (XrplNode.hasSignerQuorum, and the ledger itself on submit).
 */
function checkMultisignatures(transaction: Record<string, unknown>): { errors: FieldError[]; signerAccounts: string[] } {
  const signers = transaction.Signers
  const errors: FieldError[] = []
  const signerAccounts: string[] = []
  if (Object.hasOwn(transaction, 'TxnSignature')) {
    errors.push({ field: `${SIGNED_FIELD}.TxnSignature`, message: 'must be absent in a multisigned transaction' })
  }
  if (!Array.isArray(signers) || signers.length === 0) {
    errors.push({ field: `${SIGNED_FIELD}.Signers`, message: 'must list at least one signer' })
    return { errors, signerAccounts }
  }
  signers.forEach((entry: unknown, index) => {
    const field = `${SIGNED_FIELD}.Signers[${index}]`
    const signer = typeof entry === 'object' && entry !== null ? (entry as { Signer?: Record<string, unknown> }).Signer : undefined
    const signerAccount = signer?.Account
    if (signer === undefined || typeof signerAccount !== 'string') {
      errors.push({ field, message: 'must be a Signer with an Account' })
      return
    }
    if (signerAccounts.includes(signerAccount)) {
      errors.push({ field, message: `${signerAccount} signs more than once` })
      return
    }
    signerAccounts.push(signerAccount)
    if (!isPublicKeyHex(signer.SigningPubKey)) {
      errors.push({ field: `${field}.SigningPubKey`, message: 'must be a 33-byte secp256k1 or Ed25519 public key' })
      return
    }
    if (addressOfPublicKey(signer.SigningPubKey) !== signerAccount) {
      errors.push({ field: `${field}.SigningPubKey`, message: `does not derive ${signerAccount}; a signer must sign with its master key` })
      return
    }
    if (!isSignatureHex(signer.TxnSignature) || !verifiesForSigner(transaction, signerAccount, signer.SigningPubKey, signer.TxnSignature)) {
      errors.push({ field: `${field}.TxnSignature`, message: `does not verify for ${signerAccount}` })
    }
  })
  return { errors, signerAccounts }
}

function verifiesForSigner(transaction: Record<string, unknown>, signerAccount: string, publicKey: string, signature: string): boolean {
  let signingData: string
  try {
    signingData = encodeForMultisigning(transaction, signerAccount)
  } catch {
    return false
  }
  return verifySignatureHex(signingData, signature, publicKey)
}
