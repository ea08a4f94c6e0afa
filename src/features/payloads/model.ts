// Payloads: their types, states, and how they are shown to applications (docs/interface.md §2-4, docs/api.md).
import { toIso } from '../../platform/clock.js'
import type { MultisignState } from '../signing/multisign/model.js'
import { type MultisignView, toMultisignView } from '../signing/multisign/view.js'

export const PAYLOAD_TYPES = ['connect', 'sign', 'signAndSubmit', 'signMessage'] as const
export type PayloadType = (typeof PAYLOAD_TYPES)[number]

export const PAYLOAD_STATUSES = ['pending', 'signed', 'rejected', 'expired'] as const
export type PayloadStatus = (typeof PAYLOAD_STATUSES)[number]
export type ResolvedStatus = Exclude<PayloadStatus, 'pending'>

/** The events a resolution causes: what a webhook receives when it names no events. */
export const RESOLUTION_EVENTS = ['payload.signed', 'payload.rejected', 'payload.expired'] as const
/** Every event a webhook can subscribe to: the resolutions, and each signature of a multisigned request (opt-in). */
export const PAYLOAD_EVENTS = [...RESOLUTION_EVENTS, 'payload.signature_added'] as const
export type PayloadEvent = (typeof PAYLOAD_EVENTS)[number]

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
  /** options.multisign: the signer list and what each signer answered; null for other payloads. */
  multisign: MultisignState | null
  externalId: string | null
  metadata: Record<string, unknown> | null
}

/** What resolving a payload as signed records. */
export interface SignedResolution {
  walletAdapter: string
  signerAddress: string
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

export function signingUrl(publicUrl: string, uuid: string): string {
  return `${publicUrl}/sign/${uuid}`
}

/** The 201 body of POST /payloads: exactly the fields of docs/interface.md §4. */
export function toCreatedView(payload: Payload, publicUrl: string) {
  return {
    uuid: payload.uuid,
    type: payload.type,
    status: payload.status,
    signingUrl: signingUrl(publicUrl, payload.uuid),
    expiresAt: toIso(payload.expiresAtMs),
    createdAt: toIso(payload.createdAtMs),
  }
}

/**
 * A payload as GET /payloads/{uuid} and the list show it. Every field of docs/interface.md §2 is always present
 * (null until it has a value), and each type adds what it produces: the signed blob for transactions,
 * the key and signature for messages and connect, the ledger outcome for signAndSubmit.
 */
export function toPayloadView(payload: Payload): PayloadView {
  const view: PayloadView = {
    uuid: payload.uuid,
    type: payload.type,
    status: payload.status,
    signerAddress: payload.signerAddress,
    txHash: payload.txHash,
    walletAdapter: payload.walletAdapter,
    expiresAt: toIso(payload.expiresAtMs),
    createdAt: toIso(payload.createdAtMs),
    resolvedAt: payload.resolvedAtMs === null ? null : toIso(payload.resolvedAtMs),
    externalId: payload.externalId,
    metadata: payload.metadata,
  }
  if (isTransactionType(payload.type)) view.txBlob = payload.txBlob
  else {
    view.publicKey = payload.publicKey
    view.signature = payload.signature
  }
  if (payload.type === 'signAndSubmit') {
    view.submission = {
      engineResult: payload.submitEngineResult,
      validatedResult: payload.validatedResult,
      ledgerIndex: payload.validatedLedgerIndex,
    }
  }
  if (payload.multisign !== null) view.multisign = toMultisignView(payload.multisign, toIso)
  return view
}

export interface PayloadView {
  uuid: string
  type: PayloadType
  status: PayloadStatus
  signerAddress: string | null
  txHash: string | null
  walletAdapter: string | null
  expiresAt: string
  createdAt: string
  resolvedAt: string | null
  externalId: string | null
  metadata: Record<string, unknown> | null
  txBlob?: string | null
  publicKey?: string | null
  signature?: string | null
  submission?: { engineResult: string | null; validatedResult: string | null; ledgerIndex: number | null }
  multisign?: MultisignView
}

/** The payload object of a webhook delivery: docs/interface.md §6, null for fields a payload does not have. */
export function toWebhookPayload(payload: Payload) {
  return {
    uuid: payload.uuid,
    type: payload.type,
    status: payload.status,
    signerAddress: payload.signerAddress,
    txHash: payload.txHash,
    txBlob: payload.txBlob,
    walletAdapter: payload.walletAdapter,
    createdAt: toIso(payload.createdAtMs),
    resolvedAt: payload.resolvedAtMs === null ? null : toIso(payload.resolvedAtMs),
    ...(payload.multisign === null ? {} : { multisign: toMultisignView(payload.multisign, toIso) }),
    externalId: payload.externalId,
    metadata: payload.metadata,
  }
}
