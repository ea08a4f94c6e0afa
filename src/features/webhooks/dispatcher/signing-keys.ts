// The HMAC keys of webhooks' secrets, kept by the dispatcher: a secret is opened (AES-256-GCM) and its keys made once
// an hour, not on every delivery (docs/performance.md).
import type { SecretBox } from '../../../platform/crypto/secret-box.js'
import { type WebhookSigningKey, webhookSigningKey } from '../signature.js'

/** Secrets kept at once: more than the webhooks one instance sends to in an hour; past it the cache starts afresh. */
const MAX_KEPT_SECRETS = 1_000
/** How long a secret's keys are kept after it was opened: a deleted webhook's or a replaced secret's leave within it. */
const KEEP_MS = 60 * 60 * 1000

/**
 * Keyed by the sealed secret, as stored: a rotated secret is sealed anew, so it gets new keys, and the cache holds no
 * secret in the clear (KeyObjects keep their bytes outside the JavaScript heap). A secret that cannot be opened is not
 * kept: `of` throws as `SecretBox.open` does, every time.
 */
export class SigningKeys {
  readonly #kept = new Map<string, { key: WebhookSigningKey; openedAtMs: number }>()

  constructor(
    private readonly box: SecretBox,
    private readonly now: () => number,
  ) {}

  of(sealed: string): WebhookSigningKey {
    const nowMs = this.now()
    const kept = this.#kept.get(sealed)
    if (kept && nowMs - kept.openedAtMs < KEEP_MS) return kept.key
    const key = webhookSigningKey(this.box.open(sealed))
    if (!kept && this.#kept.size >= MAX_KEPT_SECRETS) this.#kept.clear()
    this.#kept.set(sealed, { key, openedAtMs: nowMs })
    return key
  }
}
