// Checking that a webhook delivery comes from the service: X-Service-Signature is sha256=<hex HMAC-SHA256 of the raw body>.
import { createHmac, timingSafeEqual } from 'node:crypto'

/**
 * True when `signatureHeader` (the X-Service-Signature header) is the HMAC-SHA256 of `rawBody` keyed with the
 * webhook's secret. Pass the body exactly as received, before any JSON parsing: re-serialised JSON differs.
 * The comparison takes the same time wherever the first difference is.
 */
export function verifyWebhookSignature(rawBody: string | Uint8Array, signatureHeader: string | null | undefined, secret: string): boolean {
  if (typeof signatureHeader !== 'string') return false
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`)
  const received = Buffer.from(signatureHeader.trim())
  // timingSafeEqual needs equal lengths; the expected length is public, so checking it first reveals nothing.
  return received.length === expected.length && timingSafeEqual(received, expected)
}
