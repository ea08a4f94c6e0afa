// The connect challenge: the text a wallet signs to prove it holds an account, in the spirit of Sign-In with
// Ethereum (EIP-4361), and its Ledger-device variant, a transaction that can never be applied.
// Pure and browser-safe: the signing page imports it.
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { unprocessable } from '../../../platform/errors.js'
import { toIso } from '../../../platform/utc.js'
import { addressOfPublicKey, checkSingleSignature, compareWithRequested, decodeSignedBlob, SIGNED_FIELD } from './signed-blob.js'

export interface ConnectChallengeInput {
  /** Host of the service (PUBLIC_URL), shown as the party asking. */
  domain: string
  signingUrl: string
  uuid: string
  nonce: string
  issuedAtMs: number
  expiresAtMs: number
  network: string
}

/**
 * The exact text the wallet signs. The payload uuid, the signing URL and a random nonce make each challenge
 * unique, so a signature made for one payload never verifies for another.
 */
export function buildConnectChallenge(input: ConnectChallengeInput): string {
  return [
    `${input.domain} ${CHALLENGE_HEADLINE}`,
    '',
    'Signing reveals your address only; it does not authorize any transaction.',
    '',
    `URI: ${input.signingUrl}`,
    `Network: ${input.network}`,
    `Payload ID: ${input.uuid}`,
    `Nonce: ${input.nonce}`,
    `Issued At: ${toIso(input.issuedAtMs)}`,
    `Expiration Time: ${toIso(input.expiresAtMs)}`,
  ].join('\n')
}

/** The end of every challenge's first line, after the domain. */
const CHALLENGE_HEADLINE = 'wants you to sign in with your XRP Ledger account.'

/**
 * Whether a text could be a connect challenge: its first line says what every challenge's first line says. An
 * application may not ask for a signature over such a text (signMessage), or it could ask a user to sign another
 * project's challenge and sign in there as that user.
 */
export function couldPassAsConnectChallenge(text: string): boolean {
  const firstLine = text.split(/\r?\n/, 1)[0] ?? ''
  return firstLine.toLowerCase().includes(CHALLENGE_HEADLINE.slice(0, -1).toLowerCase())
}

/** 128 random bits, hex. */
export function newChallengeNonce(): string {
  return bytesToHex(globalThis.crypto.getRandomValues(new Uint8Array(16)))
}

/** MemoType of the connect memo: "countersign/connect". */
export const CONNECT_MEMO_TYPE_HEX = bytesToHex(utf8ToBytes('countersign/connect')).toUpperCase()

/**
 * Whether a transaction could pass as a connect proof: it carries the connect memo. An application may not request
 * such a transaction (sign, signAndSubmit), or it could ask a user to sign another project's connect transaction.
 */
export function couldPassAsConnectTransaction(transaction: Record<string, unknown>): boolean {
  const memos = transaction.Memos
  if (!Array.isArray(memos)) return false
  return memos.some((entry: unknown) => {
    const memoType = (entry as { Memo?: { MemoType?: unknown } } | null)?.Memo?.MemoType
    return typeof memoType === 'string' && memoType.toUpperCase() === CONNECT_MEMO_TYPE_HEX
  })
}

/**
 * The transaction a Ledger device signs to connect (the XRP app signs transactions, not free text).
 * It carries the SHA-256 of the challenge in a memo and can never be applied: LastLedgerSequence 1 lies
 * behind every network's current ledger, so the ledger refuses it (tefMAX_LEDGER) whoever submits it.
 * Sequence 0 without a ticket is refused too (tefPAST_SEQ); Fee 0 shows the user that nothing is spent.
 */
export function buildConnectTransaction(challenge: string, account: string): Record<string, unknown> {
  return {
    TransactionType: 'AccountSet',
    Account: account,
    Fee: '0',
    Sequence: 0,
    LastLedgerSequence: 1,
    Memos: [{ Memo: { MemoType: CONNECT_MEMO_TYPE_HEX, MemoData: bytesToHex(sha256(utf8ToBytes(challenge))).toUpperCase() } }],
  }
}

export interface VerifiedConnectTransaction {
  signerAddress: string
  /** Upper-case hex. */
  publicKey: string
  txBlob: string
}

const CONNECT_WALLET_MAY_ADD: ReadonlySet<string> = new Set(['SigningPubKey', 'TxnSignature'])

/**
 * Verifies a signed connect transaction: exactly buildConnectTransaction(challenge, its Account) plus a single
 * signature, with a key that derives the Account. A RegularKey is not accepted here: the connect proof must
 * stand alone, without asking the ledger. Throws a 422 with details otherwise.
 */
export function verifyConnectTransaction(challenge: string, signedBlobHex: string): VerifiedConnectTransaction {
  const { transaction, txBlob } = decodeSignedBlob(signedBlobHex)
  const account = transaction.Account
  if (typeof account !== 'string') {
    throw unprocessable([{ field: `${SIGNED_FIELD}.Account`, message: 'is missing' }], 'The connect transaction does not verify')
  }
  const errors = compareWithRequested(buildConnectTransaction(challenge, account), transaction, CONNECT_WALLET_MAY_ADD)
  if (errors.length === 0) errors.push(...checkSingleSignature(transaction))
  if (errors.length === 0 && addressOfPublicKey(transaction.SigningPubKey as string) !== account) {
    errors.push({
      field: `${SIGNED_FIELD}.SigningPubKey`,
      message: `does not derive ${account}; connect requires the account's master key`,
    })
  }
  if (errors.length > 0) throw unprocessable(errors, 'The connect transaction does not verify')
  return { signerAddress: account, publicKey: (transaction.SigningPubKey as string).toUpperCase(), txBlob }
}
