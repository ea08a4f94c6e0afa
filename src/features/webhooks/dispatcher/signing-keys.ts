// The HMAC keys of webhooks' secrets, kept by the dispatcher: a secret is opened (AES-256-GCM, 13.5 µs here) and its
// keys made once, not on every delivery (docs/performance.md).
import type { SecretBox } from '../secret-box.js'
import { type WebhookSigningKey, webhookSigningKey } from '../signature.js'

/** Secrets kept at once: more than the webhooks one instance sends to in a while; past it the cache starts afresh. */
const MAX_KEPT_SECRETS = 1_000

/**
 * Keyed by the sealed secret, as stored: a rotated secret is sealed anew, so it gets new keys, and the cache holds no
 * secret in the clear (KeyObjects keep their bytes outside the JavaScript heap). A secret that cannot be opened is not
 * kept: `of` throws as `SecretBox.open` does, every time.
 */
export class SigningKeys {
  readonly #kept = new Map<string, WebhookSigningKey>()

  constructor(private readonly box: SecretBox) {}

  of(sealed: string): WebhookSigningKey {
    let key = this.#kept.get(sealed)
    if (!key) {
      key = webhookSigningKey(this.box.open(sealed))
      if (this.#kept.size >= MAX_KEPT_SECRETS) this.#kept.clear()
      this.#kept.set(sealed, key)
    }
    return key
  }
}
