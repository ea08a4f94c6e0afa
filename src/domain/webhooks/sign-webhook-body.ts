// The X-Service-Signature of a webhook delivery (spec section 6): HMAC-SHA256 of the exact bytes sent.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

const SIGNATURE_PREFIX = 'sha256='

/** `sha256=<lower-case hex HMAC-SHA256 of rawBody keyed with secret>`; a string body is signed as its UTF-8 bytes. */
export function signWebhookBody(rawBody: string | Buffer, secret: string): string {
  return SIGNATURE_PREFIX + createHmac('sha256', secret).update(rawBody).digest('hex')
}

/** Constant-time check of a received X-Service-Signature header against the body. */
export function verifyWebhookSignature(rawBody: string | Buffer, header: string | undefined, secret: string): boolean {
  if (header === undefined) return false
  const expected = Buffer.from(signWebhookBody(rawBody, secret))
  const received = Buffer.from(header)
  // timingSafeEqual throws on a length mismatch; the expected length is public, so comparing it first leaks nothing.
  return received.length === expected.length && timingSafeEqual(received, expected)
}

/** A new webhook signing secret: `whsec_` and 32 random bytes, base64url. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`
}
