// The API's shapes, generated from the OpenAPI document by `npm run sdk:types` (scripts/sdk-types.ts): do not edit.
// The descriptions are the service's own (docs/api.md, docs/webhooks.md).

/**
 * connect, sign, signAndSubmit or signMessage
 */
export type PayloadType = 'connect' | 'sign' | 'signAndSubmit' | 'signMessage'
export type PayloadStatus = 'pending' | 'signed' | 'rejected' | 'expired'
/**
 * payload.signed, payload.rejected or payload.expired
 */
export type PayloadEvent = 'payload.signed' | 'payload.rejected' | 'payload.expired'
/**
 * The body of a webhook delivery: check `event` before reading `payload`, which a test event does not have
 */
export type WebhookDelivery = PayloadEventDelivery | WebhookTestDelivery

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
     * http(s) URL to send the user to afterwards; {uuid} and {txHash} are filled in
     */
    returnUrl?: string
    /**
     * Shown to the user on the signing page
     */
    customInstructions?: string
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
   * The events to receive, a non-empty subset without repeats; all three when omitted
   *
   * @minItems 1
   *
   * Items: payload.signed, payload.rejected or payload.expired
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
   * Items: payload.signed, payload.rejected or payload.expired
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
   * Items: payload.signed, payload.rejected or payload.expired
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
}
/**
 * A delivery telling that a payload was signed, rejected or expired
 */
export interface PayloadEventDelivery {
  /**
   * payload.signed, payload.rejected or payload.expired
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
