// The API's shapes, as the service sends and accepts them (docs/api.md, docs/webhooks.md). Every request and response
// shape of the client is here, and only here, so that this one file can be replaced by types generated from openapi.json.

export type PayloadType = 'connect' | 'sign' | 'signAndSubmit' | 'signMessage'
export type PayloadStatus = 'pending' | 'signed' | 'rejected' | 'expired'
export type PayloadEvent = 'payload.signed' | 'payload.rejected' | 'payload.expired' | 'payload.signature_added' | 'payload.finalized'
/** signAndSubmit: the final outcome, once the validated ledger has decided. */
export type SubmissionOutcome = 'succeeded' | 'failed' | 'dropped'
/** Drops as a string, or an issued-currency amount. */
export type DeliveredAmount = string | { currency: string; issuer: string; value: string }

/** signAndSubmit: what happened on the ledger. */
export interface Submission {
  /** The engine result of the submission (tesSUCCESS, terQUEUED, or a preliminary tec...). */
  engineResult: string | null
  /** The final TransactionResult in a validated ledger. */
  validatedResult: string | null
  ledgerIndex: number | null
  /** null until final. */
  outcome: SubmissionOutcome | null
  /** Payments: the amount delivered, from the validated metadata. */
  deliveredAmount: DeliveredAmount | null
}

/** options.multisign: the signer list of the transaction's Account and who has signed. */
export interface Multisign {
  quorum: number
  /** The weight of the signatures collected so far. */
  weight: number
  signers: Array<{ account: string; weight: number; signed: boolean; signedAt: string | null; rejectedAt: string | null }>
}

export interface CreatePayloadRequest {
  type: PayloadType
  /** sign, signAndSubmit: the XRPL transaction fields (Amount as a string of drops, or an issued-currency object). */
  transaction?: Record<string, unknown>
  /** signMessage: the UTF-8 text to sign. */
  message?: string
  options?: {
    /** Seconds until the payload expires; 300 by default, at most the plan's maximum. */
    expiresIn?: number
    /** Where the signing page sends the user afterwards; {uuid}, {txHash} and {externalId} are filled in. */
    returnUrl?: string
    /** Shown to the user on the signing page; at most 200 characters. */
    customInstructions?: string
    /** 1 to 8 classic addresses: only these accounts may resolve the payload. */
    signers?: string[]
    /** sign, signAndSubmit: collect the signatures of the Account's signer list and combine them at quorum. */
    multisign?: boolean
    /** The application's own id (1-64 of A-Z a-z 0-9 . _ : -), unique per project: a second payload with it is a 409. */
    externalId?: string
    /** Any JSON object, at most 2048 bytes serialized; returned on reads and in webhook bodies. */
    metadata?: Record<string, unknown>
  }
}

export interface CreatedPayload {
  uuid: string
  type: PayloadType
  status: PayloadStatus
  /** The page to send the user to. */
  signingUrl: string
  expiresAt: string
  createdAt: string
}

export interface Payload {
  uuid: string
  type: PayloadType
  status: PayloadStatus
  signerAddress: string | null
  txHash: string | null
  walletAdapter: string | null
  expiresAt: string
  createdAt: string
  resolvedAt: string | null
  /** options.externalId, or null. */
  externalId: string | null
  /** options.metadata, or null. */
  metadata: Record<string, unknown> | null
  /** sign, signAndSubmit: the signed transaction blob, hex. */
  txBlob?: string | null
  /** signMessage, connect: the signing public key and the signature, hex. */
  publicKey?: string | null
  signature?: string | null
  /** signAndSubmit: what happened on the ledger. */
  submission?: Submission
  /** options.multisign only. */
  multisign?: Multisign
}

export interface ListPayloadsOptions {
  limit?: number
  offset?: number
  status?: PayloadStatus
  type?: PayloadType
  /** Only the payload with this externalId. */
  externalId?: string
}

export interface PayloadList {
  payloads: Payload[]
  limit: number
  offset: number
}

export interface CreateWebhookRequest {
  url: string
  /** payload.signed, payload.rejected and payload.expired when omitted; payload.finalized only when listed. */
  events?: PayloadEvent[]
}

export interface ListDeliveriesOptions {
  /** 1 to 100; 20 by default. */
  limit?: number
  offset?: number
}

/**
 * pending: waiting for its next attempt; sending: an attempt is under way; succeeded: the receiver answered 2xx;
 * failed: the last attempt failed, or the receiver answered 410; cancelled: not sent (webhook deleted or disabled, or
 * the project left the Pro plan).
 */
export type DeliveryState = 'pending' | 'sending' | 'succeeded' | 'failed' | 'cancelled'

/** A delivery of an event to a webhook, with the history of its attempts (not its body). */
export interface Delivery {
  /** dlv_<id>: the webhook-id (and X-Countersign-Delivery) header, the same on every attempt. */
  id: string
  event: DeliveryEvent
  /** Null for a test delivery. */
  payloadUuid: string | null
  state: DeliveryState
  /** Attempts made in the current series; a retry or replay starts a new series. */
  attempts: number
  lastStatusCode: number | null
  lastError: string | null
  /** When the next attempt is due; null once the delivery has finished. */
  nextAttemptAt: string | null
  createdAt: string
  completedAt: string | null
}

export interface DeliveryList {
  deliveries: Delivery[]
  limit: number
  offset: number
}

/** The answer of rotate-secret: the new secret, shown only here. */
export interface RotatedSecret {
  id: string
  secret: string
}

export interface ReplayRequest {
  /** ISO 8601 timestamp (or a Date): deliveries created at or after it that failed or were cancelled are sent again. */
  since: string | Date
}

export interface ReplayResult {
  id: string
  since: string
  /** How many deliveries were queued again. */
  replayed: number
}

export interface Webhook {
  id: string
  url: string
  events: PayloadEvent[]
  createdAt: string
  disabledAt?: string
  disabledReason?: string | null
}

export interface CreatedWebhook {
  id: string
  url: string
  /** The signing secret for verifyWebhookSignature; shown only here. */
  secret: string
  events: PayloadEvent[]
}

/** The payload object of a payload event's delivery: null for fields the payload does not have. */
export interface WebhookPayload {
  uuid: string
  type: PayloadType
  status: PayloadStatus
  signerAddress: string | null
  txHash: string | null
  txBlob: string | null
  walletAdapter: string | null
  createdAt: string
  resolvedAt: string | null
  /** payload.finalized only. */
  submission?: Submission
  /** options.multisign only. */
  multisign?: Multisign
  externalId: string | null
  metadata: Record<string, unknown> | null
}

/** A delivery telling that a payload was signed, rejected or expired, or that a submitted transaction is final. */
export interface PayloadEventDelivery {
  event: PayloadEvent
  payload: WebhookPayload
}

/** The event of a delivery: a payload event, or the test event of POST /webhooks/{id}/test. */
export type DeliveryEvent = PayloadEvent | 'webhook.test'

/** The delivery of "Send test event" (POST /webhooks/{id}/test): sent whatever the webhook's events, with no payload. */
export interface WebhookTestDelivery {
  event: 'webhook.test'
  webhookId: string
  createdAt: string
}

/** The body of a webhook delivery: check `event` before reading `payload`, which a test event does not have. */
export type WebhookDelivery = PayloadEventDelivery | WebhookTestDelivery
