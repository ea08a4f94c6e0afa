// Payloads: their types, states and limits, and the rules on them that the signing page shares (docs/interface.md §2-4,
// docs/api.md). How the service shows a payload to applications is view.ts.
import type { DeliveredAmount } from '../../platform/xrpl/xrpl-node.js'
import type { MultisignState } from '../signing/multisign/model.js'

export const PAYLOAD_TYPES = ['connect', 'sign', 'signAndSubmit', 'signMessage'] as const
export type PayloadType = (typeof PAYLOAD_TYPES)[number]

export const PAYLOAD_STATUSES = ['pending', 'signed', 'rejected', 'expired'] as const
export type PayloadStatus = (typeof PAYLOAD_STATUSES)[number]
export type ResolvedStatus = Exclude<PayloadStatus, 'pending'>

/** The events a resolution causes: what a webhook receives when it names no events. */
export const RESOLUTION_EVENTS = ['payload.signed', 'payload.rejected', 'payload.expired'] as const
/**
 * Every event a webhook can subscribe to: the resolutions, and, asked for by name, each signature of a multisigned
 * request and the final outcome of a submitted transaction.
 */
export const PAYLOAD_EVENTS = [...RESOLUTION_EVENTS, 'payload.signature_added', 'payload.finalized'] as const
export type PayloadEvent = (typeof PAYLOAD_EVENTS)[number]

/**
 * The final outcome of a signAndSubmit transaction: in a validated ledger with tesSUCCESS (succeeded) or another
 * result (failed), or never: the validated ledger passed its LastLedgerSequence without it (dropped).
 */
export const SUBMISSION_OUTCOMES = ['succeeded', 'failed', 'dropped'] as const
export type SubmissionOutcome = (typeof SUBMISSION_OUTCOMES)[number]

/** options.signers: at most this many accounts. */
export const MAX_ALLOWED_SIGNERS = 8

export const DEFAULT_EXPIRES_IN_SECONDS = 300
export const MAX_MESSAGE_BYTES = 4096
export const MAX_CUSTOM_INSTRUCTIONS_CHARS = 200
export const MAX_RETURN_URL_CHARS = 2048
/** options.externalId: the application's own id for a payload, unique per project. */
export const EXTERNAL_ID_PATTERN = '^[A-Za-z0-9._:-]{1,64}$'
/** options.metadata: at most this many bytes of UTF-8 once serialized as JSON. */
export const MAX_METADATA_BYTES = 2048

export interface Payload {
  uuid: string
  projectId: string
  type: PayloadType
  status: PayloadStatus
  transaction: Record<string, unknown> | null
  message: string | null
  challenge: string | null
  returnUrl: string | null
  customInstructions: string | null
  expiresAtMs: number
  createdAtMs: number
  resolvedAtMs: number | null
  signerAddress: string | null
  txHash: string | null
  txBlob: string | null
  walletAdapter: string | null
  publicKey: string | null
  signature: string | null
  submitEngineResult: string | null
  validatedResult: string | null
  validatedLedgerIndex: number | null
  /**
   * The hash of the transaction the validated ledger holds: txHash, or that of the same transaction signed otherwise,
   * which took its place (docs/signing.md "The final outcome").
   */
  validatedTxHash: string | null
  /** options.signers: only these accounts may resolve the payload; null for any account. */
  signers: string[] | null
  outcome: SubmissionOutcome | null
  /** A payment's delivered_amount from the validated metadata: drops as a string, or an issued-currency object. */
  deliveredAmount: DeliveredAmount | null
  /** options.multisign: the signer list and what each signer answered; null for other payloads. */
  multisign: MultisignState | null
  externalId: string | null
  metadata: Record<string, unknown> | null
  /**
   * Pending only: a signAndSubmit transaction of its may be on its way to the ledger (its submission claim is held,
   * docs/signing.md "Submission"). It stays pending, and takes no other answer, until the service knows.
   */
  submissionInDoubt: boolean
}

export type { DeliveredAmount }

/** What the validated ledger says of a submitted transaction, as recorded on its payload. */
export interface FinalOutcome {
  outcome: SubmissionOutcome
  /** null when dropped. */
  txHash: string | null
  /**
   * When the ledger holds the same transaction signed otherwise in this one's place: that transaction's proof key. One
   * ledger transaction counts for one payload: the outcome is this payload's only if no other payload holds that proof
   * (it then holds it from now on); else the payload's own transaction can never be applied, and it is dropped.
   */
  copyProofKey?: string
  /** null when dropped. */
  transactionResult: string | null
  ledgerIndex: number | null
  deliveredAmount: DeliveredAmount | null
}

/** What resolving a payload as signed records. */
export interface SignedResolution {
  walletAdapter: string
  signerAddress: string
  /**
   * What was signed and by which key (proof-key.ts): recorded so that it resolves no other payload, ever. The signing
   * service always gives it; only fixtures that resolve a payload without a wallet leave it out.
   */
  proofKey?: string
  /**
   * signAndSubmit: the proof of the ledger's transaction when it is this one signed otherwise (a copy the wallet
   * submitted), recorded with proofKey: one ledger transaction resolves one payload.
   */
  copyProofKey?: string
  txHash?: string
  txBlob?: string
  publicKey?: string
  signature?: string
  submitEngineResult?: string
}

export function isTransactionType(type: PayloadType): boolean {
  return type === 'sign' || type === 'signAndSubmit'
}

export function eventForStatus(status: ResolvedStatus): (typeof RESOLUTION_EVENTS)[number] {
  return `payload.${status}`
}

export function signingUrl(signingOrigin: string, uuid: string): string {
  return `${signingOrigin}/sign/${uuid}`
}

/**
 * Carried by a 409 whose reason is a submission in doubt (a signed transaction of the request may be on the ledger,
 * its outcome being checked), so that the signing page tells it apart from a request answered elsewhere.
 */
export const SUBMISSION_IN_DOUBT = { submission: 'in-doubt' } as const
