// The API's shapes, generated from the OpenAPI document by `npm run sdk:types` (scripts/sdk-types.ts): do not edit.
// The descriptions are the service's own (docs/api.md, docs/webhooks.md).

/**
 * connect, sign, signAndSubmit or signMessage
 */
export type PayloadType = 'connect' | 'sign' | 'signAndSubmit' | 'signMessage'
export type PayloadStatus = 'pending' | 'signed' | 'rejected' | 'expired'
/**
 * payload.signed, payload.rejected, payload.expired, or payload.signature_added (multisigned requests; only when listed)
 */
export type PayloadEvent = 'payload.signed' | 'payload.rejected' | 'payload.expired' | 'payload.signature_added'
/**
 * The body of a webhook delivery: check `event` before reading `payload`, which a test event does not have
 */
export type WebhookDelivery = PayloadEventDelivery | WebhookTestDelivery

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
   * sign, signAndSubmit: the signed transaction blob, hex
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
   * signAndSubmit only: what happened on the ledger
   */
  submission?: {
    /**
     * Engine result of the submission, e.g. tesSUCCESS or terQUEUED
     */
    engineResult: string | null
    /**
     * Final TransactionResult once validated
     */
    validatedResult: string | null
    /**
     * Ledger that validated the transaction
     */
    ledgerIndex: number | null
  }
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
   * Payloads to skip
   */
  offset?: number
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
}
export interface CreateWebhookRequest {
  /**
   * Absolute http(s) URL that receives the deliveries; it must resolve to public addresses
   */
  url: string
  /**
   * The events to receive, a non-empty subset without repeats; the three resolutions when omitted
   *
   * @minItems 1
   *
   * Items: payload.signed, payload.rejected, payload.expired, or payload.signature_added (multisigned requests; only when listed)
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
   * Items: payload.signed, payload.rejected, payload.expired, or payload.signature_added (multisigned requests; only when listed)
   */
  events: PayloadEvent[]
  /**
   * ISO 8601 UTC, millisecond precision
   */
  createdAt: string
  /**
   * Present once the webhook is disabled (its receiver answered 410 Gone)
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
   * whsec_... signing secret for X-Service-Signature; shown only in this response
   */
  secret: string
  /**
   * The events this webhook receives
   *
   * @minItems 1
   *
   * Items: payload.signed, payload.rejected, payload.expired, or payload.signature_added (multisigned requests; only when listed)
   */
  events: PayloadEvent[]
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
   * payload.signed, payload.rejected, payload.expired, or payload.signature_added (multisigned requests; only when listed)
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
