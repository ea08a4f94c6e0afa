// The signatures of a webhook delivery: X-Service-Signature (docs/interface.md §6) (HMAC-SHA256 of the exact bytes sent, keyed with
// the secret string) and Standard Webhooks' webhook-signature (HMAC-SHA256 of `id.timestamp.body`, keyed with the bytes
// the secret encodes). Receivers check them with the SDK (packages/sdk) or any Standard Webhooks library.
import { createHmac, createSecretKey, type KeyObject, randomBytes } from 'node:crypto'

const SIGNATURE_PREFIX = 'sha256='
const SECRET_PREFIX = 'whsec_'

/**
 * A secret's two HMAC keys, made once: X-Service-Signature's (the secret's UTF-8 text) and webhook-signature's (the
 * bytes it encodes, standardSigningKey). Node makes a key from a Buffer on every HMAC, 11.5 µs here against 2.0 for a
 * KeyObject made once (docs/performance.md); the dispatcher keeps each webhook's (signing-keys.ts).
 */
export interface WebhookSigningKey {
  readonly service: KeyObject
  readonly standard: KeyObject
}

export function webhookSigningKey(secret: string): WebhookSigningKey {
  return { service: createSecretKey(Buffer.from(secret, 'utf8')), standard: createSecretKey(standardSigningKey(secret)) }
}

/** `sha256=<lower-case hex HMAC-SHA256 of rawBody keyed with the secret>`; a string body is signed as its UTF-8 bytes. */
export function signWebhookBody(rawBody: string | Buffer, key: WebhookSigningKey): string {
  return SIGNATURE_PREFIX + createHmac('sha256', key.service).update(rawBody).digest('hex')
}

/**
 * A new webhook signing secret: `whsec_` and 32 random bytes in standard base64 (with padding), the form the Standard
 * Webhooks libraries decode.
 */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`
}

/**
 * The HMAC key of webhook-signature: the bytes encoded after `whsec_`. Secrets issued before Standard Webhooks encode
 * their 32 bytes in base64url; Node's base64 decoder reads both alphabets, so an old secret keys with the same 32 bytes
 * it always held, and its standard form (`-` to `+`, `_` to `/`, `=` padding) verifies in the standard libraries.
 */
export function standardSigningKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret
  const key = Buffer.from(encoded, 'base64')
  // The service never issued a secret that encodes nothing; should one exist, it keys with its own text rather than fail.
  return key.length > 0 ? key : Buffer.from(secret, 'utf8')
}

export interface StandardWebhookMessage {
  /** webhook-id: the delivery id, the same on every attempt. */
  id: string
  /** webhook-timestamp: Unix seconds of this attempt. */
  timestampSeconds: number
  /** The exact bytes sent. */
  body: string
}

/**
 * webhook-signature: `v1,<base64 HMAC-SHA256 of id.timestamp.body>` for each secret's key, space-separated, in the order
 * given (the current secret first, then one recently rotated away).
 */
export function signStandardWebhook(message: StandardWebhookMessage, keys: readonly WebhookSigningKey[]): string {
  const signed = `${message.id}.${message.timestampSeconds}.${message.body}`
  return keys.map((key) => `v1,${createHmac('sha256', key.standard).update(signed).digest('base64')}`).join(' ')
}
