// One attempt of a delivery: signs its body with the webhook's secret (and with the one a rotation replaced, while that
// still signs) and POSTs it. The dispatcher decides when to send; this is how.
import type { Logger } from 'pino'
import type { Config } from '../../../config.js'
import type { Clock } from '../../../platform/clock.js'
import type { WebhookDelivery } from '../model.js'
import type { DeliveryTarget } from '../repository.js'
import { sendWebhook, type WebhookSendResult } from '../send.js'
import { signStandardWebhook, signWebhookBody, type WebhookSigningKey } from '../signature.js'
import type { SigningKeys } from './signing-keys.js'

export interface SenderContext {
  config: Pick<Config, 'webhookAllowPrivateTargets'>
  clock: Clock
  logger: Logger
  signingKeys: SigningKeys
}

/** Sends the delivery once, within `timeoutMs`. Never throws: a secret that cannot be read is a failed attempt, unsent. */
export async function sendDelivery(
  ctx: SenderContext,
  delivery: WebhookDelivery,
  target: DeliveryTarget,
  timeoutMs: number,
): Promise<WebhookSendResult> {
  let key: WebhookSigningKey
  try {
    key = ctx.signingKeys.of(target.secretCiphertext)
  } catch (error) {
    // The server secret changed since the webhook was created: nothing can be signed for it, so no attempt is made.
    const message = `the webhook's secret could not be decrypted (${(error as Error).message}); register the webhook again`
    return { ok: false, statusCode: null, error: message, retryAfter: undefined, durationMs: 0 }
  }
  const nowMs = ctx.clock.now()
  const timestampSeconds = Math.floor(nowMs / 1000)
  return sendWebhook({
    url: target.url,
    body: delivery.body,
    headers: {
      'X-Service-Signature': signWebhookBody(delivery.body, key),
      'webhook-id': delivery.id,
      'webhook-timestamp': String(timestampSeconds),
      'webhook-signature': signStandardWebhook({ id: delivery.id, timestampSeconds, body: delivery.body }, [
        key,
        ...previousKey(ctx, target, nowMs),
      ]),
      'X-Countersign-Delivery': delivery.id,
      'X-Countersign-Timestamp': String(timestampSeconds),
      'X-Countersign-Event': delivery.event,
    },
    timeoutMs,
    allowPrivateTargets: ctx.config.webhookAllowPrivateTargets,
  })
}

/** The key of the secret a rotation replaced, while it still signs beside the new one; none once it has expired or cannot be read. */
function previousKey(ctx: SenderContext, target: DeliveryTarget, nowMs: number): WebhookSigningKey[] {
  const { previousSecretCiphertext: sealed, previousSecretExpiresAtMs: expiresAtMs } = target
  if (sealed === null || expiresAtMs === null || nowMs >= expiresAtMs) return []
  try {
    return [ctx.signingKeys.of(sealed)]
  } catch (error) {
    ctx.logger.warn(
      { err: error, webhookId: target.webhookId },
      "the webhook's previous secret could not be decrypted; signing with the current one only",
    )
    return []
  }
}
