// Checking that a webhook delivery comes from the service. Two schemes are sent on every delivery:
// - Standard Webhooks (standard-webhooks.com): webhook-signature is `v1,<base64 HMAC-SHA256 of id.timestamp.body>`,
//   keyed with the bytes encoded after `whsec_`; it covers the delivery id and the timestamp, so a captured delivery
//   cannot be replayed once the timestamp is old. verifyWebhook checks it by default.
// - The specification's X-Service-Signature: `sha256=<hex HMAC-SHA256 of the body>`, keyed with the secret string. It
//   covers the body only.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { WebhookVerificationError } from './errors.js'
import type { WebhookDelivery } from './types.js'

/** How far a delivery's timestamp may be from now, either way: 5 minutes, as the Standard Webhooks libraries allow. */
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60

const SECRET_PREFIX = 'whsec_'

/** Request headers as node:http gives them, as a plain record, or a fetch Headers object. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>

export interface VerifyWebhookOptions {
  /**
   * 'standard' (the default): webhook-id, webhook-timestamp and webhook-signature. 'service-signature':
   * X-Service-Signature, with the unsigned X-Countersign-Timestamp checked against the tolerance; the timestamp is not
   * covered by that signature, so only the standard scheme stops a deliberate replay.
   */
  scheme?: 'standard' | 'service-signature'
  /** Seconds the timestamp may differ from now, either way; 300 by default. */
  toleranceSeconds?: number
  /** The current time in milliseconds; Date.now by default. */
  now?: () => number
}

/**
 * Verifies a webhook delivery and returns its parsed body. Throws WebhookVerificationError when a header is missing,
 * the timestamp is more than `toleranceSeconds` away from now, or no signature matches. Pass the body exactly as
 * received, before any JSON parsing: re-serialised JSON differs. During the 24 hours after a secret rotation, either
 * the new secret or the old one verifies.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions = {},
): WebhookDelivery {
  // Signatures are checked over the bytes as received; the text is only parsed once they match.
  const bytes = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody
  const toleranceSeconds = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS
  const nowMs = (options.now ?? Date.now)()
  // A NaN would turn the replay check off without a word (every comparison with it is false): the classic
  // `Number(process.env.TOLERANCE)` with the variable unset. A mistake of the caller's, so a TypeError.
  if (typeof toleranceSeconds !== 'number' || !Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) {
    throw new TypeError(`toleranceSeconds must be a finite number of seconds, 0 or more, got ${String(toleranceSeconds)}`)
  }
  if (typeof nowMs !== 'number' || !Number.isFinite(nowMs)) throw new TypeError(`now() must return milliseconds, got ${String(nowMs)}`)
  const nowSeconds = Math.floor(nowMs / 1000)
  if (options.scheme === 'service-signature') {
    checkTimestamp(requireHeader(headers, 'x-countersign-timestamp'), nowSeconds, toleranceSeconds)
    if (!verifyWebhookSignature(bytes, headerValue(headers, 'x-service-signature'), secret)) {
      throw new WebhookVerificationError('invalid_signature', 'X-Service-Signature does not match the body and the secret')
    }
  } else {
    const id = requireHeader(headers, 'webhook-id')
    const timestamp = requireHeader(headers, 'webhook-timestamp')
    const signatures = requireHeader(headers, 'webhook-signature')
    checkTimestamp(timestamp, nowSeconds, toleranceSeconds)
    const expected = Buffer.from(createHmac('sha256', signingKey(secret)).update(`${id}.${timestamp}.`).update(bytes).digest('base64'))
    const matches = signatures.split(' ').some((entry) => {
      const [version, signature] = entry.split(',', 2)
      if (version !== 'v1' || signature === undefined) return false
      const received = Buffer.from(signature)
      return received.length === expected.length && timingSafeEqual(received, expected)
    })
    if (!matches) throw new WebhookVerificationError('invalid_signature', 'No webhook-signature matches the delivery and the secret')
  }
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8')) as WebhookDelivery
  } catch {
    // Signed by the service, so this does not happen; a clear error is still better than a SyntaxError.
    throw new WebhookVerificationError('invalid_signature', 'The delivery body is not JSON')
  }
}

/**
 * True when `signatureHeader` (the X-Service-Signature header) is the HMAC-SHA256 of `rawBody` keyed with the
 * webhook's secret. It covers the body only: prefer verifyWebhook, which also checks the delivery id and timestamp.
 * The comparison takes the same time wherever the first difference is.
 */
export function verifyWebhookSignature(rawBody: string | Uint8Array, signatureHeader: string | null | undefined, secret: string): boolean {
  if (typeof signatureHeader !== 'string') return false
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`)
  const received = Buffer.from(signatureHeader.trim())
  // timingSafeEqual needs equal lengths; the expected length is public, so checking it first reveals nothing.
  return received.length === expected.length && timingSafeEqual(received, expected)
}

/**
 * The HMAC key of webhook-signature: the bytes encoded after `whsec_`, in standard base64 or, for secrets issued
 * before Standard Webhooks, base64url (Node's decoder reads both). A secret that encodes nothing keys with its text.
 */
function signingKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret
  const key = Buffer.from(encoded, 'base64')
  return key.length > 0 ? key : Buffer.from(secret, 'utf8')
}

function checkTimestamp(value: string, nowSeconds: number, toleranceSeconds: number): void {
  if (!/^\d{1,15}$/.test(value)) throw new WebhookVerificationError('invalid_timestamp', `The timestamp "${value}" is not Unix seconds`)
  const ageSeconds = nowSeconds - Number(value)
  if (!(Math.abs(ageSeconds) <= toleranceSeconds)) {
    throw new WebhookVerificationError(
      'timestamp_out_of_range',
      `The delivery's timestamp is ${Math.abs(ageSeconds)} s ${ageSeconds > 0 ? 'old' : 'in the future'}, more than the ${toleranceSeconds} s allowed`,
    )
  }
}

function headerValue(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined
  const record = headers as Record<string, string | string[] | undefined>
  for (const [key, value] of Object.entries(record)) {
    if (key.toLowerCase() === name && value !== undefined) return Array.isArray(value) ? value.join(', ') : value
  }
  return undefined
}

function requireHeader(headers: WebhookHeaders, name: string): string {
  const value = headerValue(headers, name)
  if (value === undefined || value === '') throw new WebhookVerificationError('missing_header', `The ${name} header is missing`)
  return value
}
