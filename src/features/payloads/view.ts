// How a payload is shown to applications: the answer to its creation, the payload view of GET /payloads/{uuid}, the
// list and the live stream, and the payload object of a webhook delivery (docs/interface.md §2, §4, §6). Apart from
// model.ts, which the signing page shares, so that the page loads none of this.
import { toIso } from '../../platform/utc.js'
import { toMultisignView } from '../signing/multisign/view.js'
import type { WebhookPayload } from '../webhooks/schemas.js'
import { isTransactionType, type Payload, type PayloadEvent, signingUrl } from './model.js'
import type { CreatedPayload, PayloadView, SubmissionView } from './schemas.js'

/** The 201 body of POST /payloads: exactly the fields of docs/interface.md §4. */
export function toCreatedView(payload: Payload, signingOrigin: string): CreatedPayload {
  return {
    uuid: payload.uuid,
    type: payload.type,
    status: payload.status,
    signingUrl: signingUrl(signingOrigin, payload.uuid),
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
  if (payload.type === 'connect') {
    // What the application checks the sign-in against: the text issued, and the record signed when it was not the text.
    if (payload.challenge !== null) view.challenge = payload.challenge
    view.txBlob = payload.txBlob
  }
  if (payload.type === 'signAndSubmit') {
    view.submission = submissionOf(payload)
  }
  if (payload.multisign !== null) view.multisign = toMultisignView(payload.multisign, toIso)
  return view
}

function submissionOf(payload: Payload): SubmissionView {
  return {
    engineResult: payload.submitEngineResult,
    txHash: payload.validatedTxHash,
    validatedResult: payload.validatedResult,
    ledgerIndex: payload.validatedLedgerIndex,
    outcome: payload.outcome,
    deliveredAmount: payload.deliveredAmount,
  }
}

/**
 * The payload object of a webhook delivery: docs/interface.md §6, null for fields a payload does not have. The
 * payload.finalized event adds `submission` as the payload view shows it.
 */
export function toWebhookPayload(payload: Payload, event?: PayloadEvent): WebhookPayload {
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
    ...(event === 'payload.finalized' ? { submission: submissionOf(payload) } : {}),
    ...(payload.multisign === null ? {} : { multisign: toMultisignView(payload.multisign, toIso) }),
    externalId: payload.externalId,
    metadata: payload.metadata,
  }
}
