// The API's shapes, generated from the OpenAPI document by `npm run sdk:types` (scripts/sdk-types.ts): do not edit.
// The descriptions are the service's own (docs/api.md, docs/webhooks.md).

/**
 * connect, sign, signAndSubmit or signMessage
 */
export type PayloadType = 'connect' | 'sign' | 'signAndSubmit' | 'signMessage'
export type PayloadStatus = 'pending' | 'signed' | 'rejected' | 'expired'
/**
 * payload.signed, payload.rejected, payload.expired, payload.signature_added (multisigned requests) or payload.finalized (a submitted transaction is final); the last two only when listed
 */
export type PayloadEvent = 'payload.signed' | 'payload.rejected' | 'payload.expired' | 'payload.signature_added' | 'payload.finalized'
export type SubmissionOutcome = 'succeeded' | 'failed' | 'dropped'
export type DeliveredAmount =
  | string
  | {
      currency: string
      issuer: string
      value: string
    }
/**
 * pending (waiting for its next attempt), sending, succeeded, failed (last attempt failed, or the receiver answered 410), cancelled (webhook deleted or disabled, or the project left the Pro plan)
 */
export type DeliveryState = 'pending' | 'sending' | 'succeeded' | 'failed' | 'cancelled'
/**
 * payload.signed, payload.rejected, payload.expired, payload.signature_added, payload.finalized, or webhook.test
 */
export type DeliveryEvent =
  | 'payload.signed'
  | 'payload.rejected'
  | 'payload.expired'
  | 'payload.signature_added'
  | 'payload.finalized'
  | 'webhook.test'
/**
 * The body of a webhook delivery: check `event` before reading `payload`, which a test event does not have
 */
export type WebhookDelivery = PayloadEventDelivery | WebhookTestDelivery

/**
 * signAndSubmit only: what happened on the ledger
 */
export interface Submission {
  /**
   * Engine result of the submission, e.g. tesSUCCESS or terQUEUED
   */
  engineResult: string | null
  /**
   * Once succeeded or failed: the hash of the transaction the validated ledger holds, the payload's txHash, or that of the same transaction signed otherwise (other signatures, another of the account's keys), which took its place
   */
  txHash: string | null
  /**
   * Final TransactionResult once validated
   */
  validatedResult: string | null
  /**
   * Ledger that validated the transaction
   */
  ledgerIndex: number | null
  /**
   * succeeded, failed or dropped once final; null until then
   */
  outcome: SubmissionOutcome | null
  /**
   * Payments: the validated metadata's delivered_amount (drops, or an issued-currency amount); null otherwise
   */
  deliveredAmount: DeliveredAmount | null
}
/**
 * options.multisign only: the signer list of the Account and who has answered
 */
export interface Multisign {
  /**
   * The signer list's quorum
   */
  quorum: number
  /**
   * The weight of the signatures collected so far
   */
  weight: number
  signers: {
    account: string
    weight: number
    signed: boolean
    /**
     * When this signer signed
     */
    signedAt: string | null
    /**
     * When this signer rejected
     */
    rejectedAt: string | null
  }[]
}
export interface CreatePayloadRequest {
  /**
   * connect, sign, signAndSubmit or signMessage
   */
  type: PayloadType
  /**
   * Raw XRPL transaction fields; required for sign and signAndSubmit
   */
  transaction?: {
    [k: string]: unknown
  }
  /**
   * UTF-8 text to sign; required for signMessage; at most 4096 bytes, no U+0000
   */
  message?: string
  options?: {
    /**
     * TTL in seconds; default 300, or the plan's maximum when that is lower; at most the plan's maximum (Free 300, Pro 86400)
     */
    expiresIn?: number
    /**
     * http(s) URL to send the user to afterwards; {uuid}, {txHash} and {externalId} are filled in
     */
    returnUrl?: string
    /**
     * Shown to the user on the signing page
     */
    customInstructions?: string
    /**
     * 1 to 8 classic addresses: only these accounts may resolve the payload
     *
     * @minItems 1
     * @maxItems 8
     */
    signers?: string[]
    /**
     * sign, signAndSubmit: collect the signatures of the Account's signer list (read from the XRPL node) and combine them at quorum
     */
    multisign?: boolean
    /**
     * The application's own id, 1-64 characters of A-Z a-z 0-9 . _ : -; unique per project (409 with the existing uuid)
     */
    externalId?: string
    /**
     * Any JSON object, at most 2048 bytes serialized; returned on reads and in webhook bodies
     */
    metadata?: {
      [k: string]: unknown
    }
  }
}
export interface CreatedPayload {
  uuid: string
  /**
   * connect, sign, signAndSubmit or signMessage
   */
  type: PayloadType
  status: PayloadStatus
  /**
   * The page to send the user to
   */
  signingUrl: string
  /**
   * ISO 8601 UTC, millisecond precision
   */
  expiresAt: string
  /**
   * ISO 8601 UTC, millisecond precision
   */
  createdAt: string
}
export interface Payload {
  uuid: string
  /**
   * connect, sign, signAndSubmit or signMessage
   */
  type: PayloadType
  status: PayloadStatus
  /**
   * XRPL address of the signer; set once signed
   */
  signerAddress: string | null
  /**
   * Hash of the signed transaction (sign, signAndSubmit); set once signed
   */
  txHash: string | null
  /**
   * Wallet used to resolve the payload
   */
  walletAdapter: string | null
  /**
   * ISO 8601 UTC, millisecond precision
   */
  expiresAt: string
  /**
   * ISO 8601 UTC, millisecond precision
   */
  createdAt: string
  /**
   * Set on every move out of pending, expiry included
   */
  resolvedAt: string | null
  /**
   * options.externalId, null when not given
   */
  externalId: string | null
  /**
   * options.metadata, null when not given
   */
  metadata: {
    [k: string]: unknown
  } | null
  /**
   * sign, signAndSubmit: the signed transaction blob, hex. connect: the signed sign-in record when the wallet signed one (a Ledger device, Xaman), null when it signed the challenge text
   */
  txBlob?: string | null
  /**
   * signMessage, connect: the signing public key, hex
   */
  publicKey?: string | null
  /**
   * signMessage, connect: the signature, hex
   */
  signature?: string | null
  /**
   * connect: the sign-in text the service issued for this payload, to check the signature against on the application's side
   */
  challenge?: string
  /**
   * signAndSubmit only: what happened on the ledger
   */
  submission?: Submission
  /**
   * options.multisign only: the signer list of the Account and who has answered
   */
  multisign?: Multisign
}
export interface ListPayloadsOptions {
  /**
   * Page size, 1 to 100
   */
  limit?: number
  /**
   * Payloads to skip, 0 to 1000000
   */
  offset?: number
  /**
   * A cursor: the page starts after this payload (the last uuid of the page before), so that payloads created while a client pages neither move nor repeat items. Not with offset.
   */
  after?: string
  /**
   * Only payloads in this status
   */
  status?: PayloadStatus
  /**
   * Only payloads of this type
   */
  type?: PayloadType
  /**
   * Only the payload with this externalId
   */
  externalId?: string
}
export interface PayloadList {
  payloads: Payload[]
  limit: number
  offset: number
  /**
   * Whether items follow this page: ask for the next with offset + limit, or (payloads) after = its last uuid
   */
  hasMore: boolean
}
export interface CreateWebhookRequest {
  /**
   * Absolute http(s) URL that receives the deliveries; it must resolve to public addresses
   */
  url: string
  /**
   * The events to receive, a non-empty subset without repeats; payload.signed, payload.rejected and payload.expired when omitted (payload.finalized only when listed)
   *
   * @minItems 1
   *
   * Items: payload.signed, payload.rejected, payload.expired, payload.signature_added (multisigned requests) or payload.finalized (a submitted transaction is final); the last two only when listed
   */
  events?: PayloadEvent[]
}
export interface Webhook {
  /**
   * wh_<id>
   */
  id: string
  url: string
  /**
   * The events this webhook receives
   *
   * @minItems 1
   *
   * Items: payload.signed, payload.rejected, payload.expired, payload.signature_added (multisigned requests) or payload.finalized (a submitted transaction is final); the last two only when listed
   */
  events: PayloadEvent[]
  /**
   * ISO 8601 UTC, millisecond precision
   */
  createdAt: string
  /**
   * Present while the webhook is disabled (its receiver answered 410 Gone, or every delivery failed for 5 days)
   */
  disabledAt?: string
  /**
   * Why the webhook was disabled
   */
  disabledReason?: string | null
}
export interface CreatedWebhook {
  /**
   * wh_<id>
   */
  id: string
  url: string
  /**
   * whsec_<base64 of 32 bytes>: the signing secret of X-Service-Signature and webhook-signature; shown only in this response
   */
  secret: string
  /**
   * The events this webhook receives
   *
   * @minItems 1
   *
   * Items: payload.signed, payload.rejected, payload.expired, payload.signature_added (multisigned requests) or payload.finalized (a submitted transaction is final); the last two only when listed
   */
  events: PayloadEvent[]
}
export interface ListDeliveriesOptions {
  /**
   * Page size, 1 to 100
   */
  limit?: number
  /**
   * Deliveries to skip, 0 to 1000000
   */
  offset?: number
}
export interface Delivery {
  /**
   * dlv_<id>; sent as webhook-id (and X-Countersign-Delivery), the same on every attempt
   */
  id: string
  /**
   * payload.signed, payload.rejected, payload.expired, payload.signature_added, payload.finalized, or webhook.test
   */
  event: DeliveryEvent
  /**
   * Null for a test delivery
   */
  payloadUuid: string | null
  /**
   * pending (waiting for its next attempt), sending, succeeded, failed (last attempt failed, or the receiver answered 410), cancelled (webhook deleted or disabled, or the project left the Pro plan)
   */
  state: DeliveryState
  /**
   * Attempts made in the current series; a retry starts a new series
   */
  attempts: number
  /**
   * The receiver's HTTP status at the last attempt
   */
  lastStatusCode: number | null
  /**
   * Why the last attempt failed (timeout, connection error, status)
   */
  lastError: string | null
  /**
   * When the next attempt is due; null once the delivery has finished
   */
  nextAttemptAt: string | null
  /**
   * ISO 8601 UTC, millisecond precision
   */
  createdAt: string
  /**
   * When the delivery succeeded, failed or was cancelled
   */
  completedAt: string | null
}
export interface DeliveryList {
  deliveries: Delivery[]
  limit: number
  offset: number
  /**
   * Whether items follow this page: ask for the next with offset + limit, or (payloads) after = its last uuid
   */
  hasMore: boolean
}
export interface RotatedSecret {
  /**
   * wh_<id>
   */
  id: string
  /**
   * The new whsec_... secret, shown only in this response; the replaced one also signs webhook-signature for 24 hours
   */
  secret: string
}
export interface ReplayRequest {
  /**
   * ISO 8601 timestamp: deliveries created at or after it are sent again
   */
  since: string
}
export interface ReplayResult {
  /**
   * wh_<id>
   */
  id: string
  /**
   * The since of the request
   */
  since: string
  /**
   * How many failed or cancelled deliveries were queued again
   */
  replayed: number
}
export interface WebhookPayload {
  uuid: string
  /**
   * connect, sign, signAndSubmit or signMessage
   */
  type: PayloadType
  status: PayloadStatus
  signerAddress: string | null
  txHash: string | null
  txBlob: string | null
  walletAdapter: string | null
  /**
   * ISO 8601 UTC, millisecond precision
   */
  createdAt: string
  /**
   * ISO 8601 UTC, millisecond precision
   */
  resolvedAt: string | null
  /**
   * signAndSubmit only: what happened on the ledger
   */
  submission?: Submission
  /**
   * options.multisign only: the signer list of the Account and who has answered
   */
  multisign?: Multisign
  /**
   * options.externalId, null when not given
   */
  externalId: string | null
  /**
   * options.metadata, null when not given
   */
  metadata: {
    [k: string]: unknown
  } | null
}
/**
 * A delivery telling that a payload was signed, rejected or expired
 */
export interface PayloadEventDelivery {
  /**
   * payload.signed, payload.rejected, payload.expired, payload.signature_added (multisigned requests) or payload.finalized (a submitted transaction is final); the last two only when listed
   */
  event: PayloadEvent
  payload: WebhookPayload
}
/**
 * The delivery of "Send test event": sent whatever the webhook's events, with no payload
 */
export interface WebhookTestDelivery {
  event: 'webhook.test'
  webhookId: string
  /**
   * ISO 8601 UTC, millisecond precision
   */
  createdAt: string
}
