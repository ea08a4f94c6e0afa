// The X-Service-Signature of a webhook delivery (docs/interface.md §6): HMAC-SHA256 of the exact bytes sent. Receivers
// check it with the SDK's verifyWebhookSignature (packages/sdk).
import { createHmac, randomBytes } from 'node:crypto'

const SIGNATURE_PREFIX = 'sha256='

/** `sha256=<lower-case hex HMAC-SHA256 of rawBody keyed with secret>`; a string body is signed as its UTF-8 bytes. */
export function signWebhookBody(rawBody: string | Buffer, secret: string): string {
  return SIGNATURE_PREFIX + createHmac('sha256', secret).update(rawBody).digest('hex')
}

/** A new webhook signing secret: `whsec_` and 32 random bytes, base64url. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`
}
