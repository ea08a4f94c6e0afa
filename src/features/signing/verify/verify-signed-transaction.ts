// Verifies a wallet's signed transaction blob against the transaction a payload requested (sign, signAndSubmit).
import { sha512 } from '@noble/hashes/sha2.js'
import { bytesToHex, concatBytes, hexToBytes } from '@noble/hashes/utils.js'
import { encodeForMultisigning } from 'ripple-binary-codec'
import { type FieldError, unprocessable } from '../../../platform/errors.js'
import {
  addressOfPublicKey,
  checkSingleSignature,
  compareWithRequested,
  decodeSignedBlob,
  isPublicKeyHex,
  isSignatureHex,
  MAX_SIGNERS,
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

/**
 * Throws a 422 with details on any mismatch, bad signature or malformed blob; never another error type. The cheap
 * checks come first and the first failing stage ends it: the fields against the request, the shape of the signature
 * fields and the number of signers, and only then the cryptography, which stops at the first signature that fails.
 * A hostile blob costs at most one failed verification more than an honest one.
 */
export function verifySignedTransaction(requested: Record<string, unknown>, signedBlobHex: string): VerifiedTransaction {
  const { transaction, txBlob } = decodeSignedBlob(signedBlobHex)
  const refuse = (errors: FieldError[]) => unprocessable(errors, 'The signed transaction does not verify')
  const walletMayAdd = new Set(WALLET_MAY_ADD)
  if (!Object.hasOwn(requested, 'Account')) walletMayAdd.add('Account')
  const errors = compareWithRequested(requested, transaction, walletMayAdd)

  const account = transaction.Account
  if (typeof account !== 'string') {
    errors.push({ field: `${SIGNED_FIELD}.Account`, message: 'is missing: the transaction must name its account' })
  }
  if (errors.length > 0) throw refuse(errors)

  const signingPubKey = transaction.SigningPubKey
  const multisigned = signingPubKey === '' && Object.hasOwn(transaction, 'Signers')
  let signerAccounts: string[] = []
  if (multisigned) {
    const checked = checkMultisignatures(transaction)
    if (checked.errors.length > 0) throw refuse(checked.errors)
    signerAccounts = checked.signerAccounts
  } else if (Object.hasOwn(transaction, 'Signers')) {
    throw refuse([
      {
        field: `${SIGNED_FIELD}.Signers`,
        message: 'must be absent when SigningPubKey is set: a transaction is single-signed or multisigned',
      },
    ])
  } else {
    const signatureErrors = checkSingleSignature(transaction)
    if (signatureErrors.length > 0) throw refuse(signatureErrors)
  }

  const singleKey = multisigned ? '' : (signingPubKey as string).toUpperCase()
  return {
    transaction,
    txBlob,
    txHash: transactionHash(txBlob),
    signerAddress: account as string,
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
  const fail = (field: string, message: string) => ({ errors: [{ field, message }], signerAccounts: [] })
  if (Object.hasOwn(transaction, 'TxnSignature')) return fail(`${SIGNED_FIELD}.TxnSignature`, 'must be absent in a multisigned transaction')
  if (!Array.isArray(signers) || signers.length === 0) return fail(`${SIGNED_FIELD}.Signers`, 'must list at least one signer')
  if (signers.length > MAX_SIGNERS) {
    return fail(`${SIGNED_FIELD}.Signers`, `lists ${signers.length} signers; the XRP Ledger accepts at most ${MAX_SIGNERS}`)
  }
  // Every signer's shape first (no cryptography), then the signatures, stopping at the first that fails.
  const entries: Array<{ field: string; account: string; publicKey: string; signature: string }> = []
  for (const [index, entry] of signers.entries()) {
    const field = `${SIGNED_FIELD}.Signers[${index}]`
    const signer = typeof entry === 'object' && entry !== null ? (entry as { Signer?: Record<string, unknown> }).Signer : undefined
    const signerAccount = signer?.Account
    if (signer === undefined || typeof signerAccount !== 'string') return fail(field, 'must be a Signer with an Account')
    if (entries.some((seen) => seen.account === signerAccount)) return fail(field, `${signerAccount} signs more than once`)
    if (!isPublicKeyHex(signer.SigningPubKey)) return fail(`${field}.SigningPubKey`, 'must be a 33-byte secp256k1 or Ed25519 public key')
    if (!isSignatureHex(signer.TxnSignature)) return fail(`${field}.TxnSignature`, `does not verify for ${signerAccount}`)
    entries.push({ field, account: signerAccount, publicKey: signer.SigningPubKey, signature: signer.TxnSignature })
  }
  for (const { field, account, publicKey } of entries) {
    if (addressOfPublicKey(publicKey) !== account) {
      return fail(`${field}.SigningPubKey`, `does not derive ${account}; a signer must sign with its master key`)
    }
  }
  for (const { field, account, publicKey, signature } of entries) {
    if (!verifiesForSigner(transaction, account, publicKey, signature))
      return fail(`${field}.TxnSignature`, `does not verify for ${account}`)
  }
  return { errors: [], signerAccounts: entries.map((entry) => entry.account) }
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

/** The ledger's prefix of a transaction ID: 'TXN' and a zero byte. */
const TRANSACTION_ID_PREFIX = Uint8Array.of(0x54, 0x58, 0x4e, 0x00)

/** A signed transaction's hash, as the ledger computes it: the first half of SHA-512 over the prefix and the blob. */
function transactionHash(txBlob: string): string {
  return bytesToHex(sha512(concatBytes(TRANSACTION_ID_PREFIX, hexToBytes(txBlob))).subarray(0, 32)).toUpperCase()
}
