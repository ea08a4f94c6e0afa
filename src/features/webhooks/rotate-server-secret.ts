// `countersign rotate-secret`: re-seals every webhook secret under a new server secret, in one transaction, and
// forgets the secret the embedded quick start generated, so that the database alone no longer opens them. What else
// is sealed under the server secret goes with them: a rotated webhook's previous secret (it signs beside the new one
// for 24 hours) and the responses kept with Idempotency-Keys (a webhook's creation response holds its secret).
//
// And the check every instance makes at start that its server secret is the one these were sealed under: under
// another, each delivery fails and each replay of a kept response would answer 500.
import type { Db, DbOrTx } from '../../platform/db/database.js'
import { idempotencyKeysRepository } from '../../platform/db/idempotency-keys-repository.js'
import { GENERATED_SECRET_KEY, settingsRepository } from '../../platform/db/settings-repository.js'
import { webhookDeliveriesRepository } from './deliveries-repository.js'
import { webhooksRepository } from './repository.js'
import { createSecretBox, type SecretBox } from './secret-box.js'
import { newWebhookSecret } from './signature.js'

export interface SecretRotation {
  /** Webhook secrets sealed under the old secret, now under the new one. */
  resealed: number
  /** Webhook secrets already under the new secret (a rotation run twice, or webhooks created after a restart). */
  alreadyCurrent: number
  /** Whether a generated secret was removed from the database. */
  removedGenerated: boolean
  /** With discardUnreadable: the webhooks whose secret opened under neither secret, now disabled with a new one. */
  discardedSecrets: string[]
  /** With discardUnreadable: kept responses that opened under neither secret, now a 409 that says so. */
  discardedResponses: number
}

export interface RotationOptions {
  /**
   * For a server secret that is lost: what opens under neither secret is given up instead of stopping the rotation. A
   * webhook's secret is replaced by a new one, which no one has seen, and the webhook is disabled until its project
   * rotates the secret (and so learns it) and enables it; a kept response is replaced by a 409 that says it was lost.
   */
  discardUnreadable?: boolean
  /** When a webhook is disabled; the clock's now. */
  nowMs?: number
}

export class SecretRotationError extends Error {
  override name = 'SecretRotationError'
}

/** Why a webhook is disabled by a rotation that discarded its secret: what its project does next. */
export const LOST_SECRET_REASON =
  'its secret was sealed under a server secret that was lost (countersign rotate-secret --discard-unreadable): rotate its secret, give the new one to the receiver, then enable it'

/** What a replay of a kept response that was discarded answers. */
export const LOST_RESPONSE_MESSAGE =
  'The response kept for this Idempotency-Key was sealed under a server secret that was lost, and can no longer be shown. The request it answered was done: look its result up (GET) instead of repeating it'

/**
 * The old secret is `oldSecret`, or when undefined the generated one in the database (with discardUnreadable, there may
 * be none: nothing opens under it); nothing changes on any failure.
 */
export async function rotateServerSecret(
  db: Db,
  oldSecret: string | undefined,
  newSecret: string,
  options: RotationOptions = {},
): Promise<SecretRotation> {
  const discardUnreadable = options.discardUnreadable ?? false
  return db.transaction().execute(async (tx) => {
    const generated = await settingsRepository.get(tx, GENERATED_SECRET_KEY)
    const from = oldSecret ?? generated
    if (from === undefined && !discardUnreadable) {
      throw new SecretRotationError(
        'No old secret: set OLD_SESSION_SECRET to the SESSION_SECRET the service ran with until now (the database holds no generated one); if it is lost, add --discard-unreadable',
      )
    }
    const oldBox = from === undefined ? undefined : createSecretBox(from)
    const newBox = createSecretBox(newSecret)
    const rotation = {
      resealed: 0,
      alreadyCurrent: 0,
      removedGenerated: generated !== undefined,
      discardedSecrets: [] as string[],
      discardedResponses: 0,
    }
    for (const { id, secretCiphertext, previousSecretCiphertext } of await webhooksRepository.listSealedSecrets(tx)) {
      // One that opens under neither is left as it is rather than stopping the rotation; discarded, it is dropped.
      const previous =
        previousSecretCiphertext === null
          ? null
          : (underNewSecret(oldBox, newBox, previousSecretCiphertext) ?? (discardUnreadable ? null : previousSecretCiphertext))
      if (opens(newBox, secretCiphertext)) {
        rotation.alreadyCurrent++
        if (previous !== previousSecretCiphertext) {
          await webhooksRepository.replaceSealedSecrets(tx, id, { secretCiphertext, previousSecretCiphertext: previous })
        }
        continue
      }
      if (oldBox === undefined || !opens(oldBox, secretCiphertext)) {
        if (!discardUnreadable) {
          throw new SecretRotationError(
            `The secret of webhook ${id} opens under neither the old nor the new secret; nothing was changed. Check OLD_SESSION_SECRET (if it is lost, --discard-unreadable gives such webhooks new secrets and disables them)`,
          )
        }
        // As any disabled webhook: what waits for it is cancelled, to be replayed once its project has enabled it.
        const nowMs = options.nowMs ?? Date.now()
        await webhooksRepository.replaceLostSecret(tx, id, newBox.seal(newWebhookSecret()), nowMs, LOST_SECRET_REASON)
        await webhookDeliveriesRepository.cancelPendingForWebhook(tx, id, nowMs)
        rotation.discardedSecrets.push(id)
        continue
      }
      await webhooksRepository.replaceSealedSecrets(tx, id, {
        secretCiphertext: newBox.seal(oldBox.open(secretCiphertext)),
        previousSecretCiphertext: previous,
      })
      rotation.resealed++
    }
    for (let after: { projectId: string; key: string } | undefined; ; ) {
      const page = await idempotencyKeysRepository.listSealedResponses(tx, after, RESPONSES_A_PAGE)
      for (const kept of page) {
        const responseSealed = underNewSecret(oldBox, newBox, kept.responseSealed)
        if (responseSealed === undefined && discardUnreadable) {
          const lost = newBox.seal(JSON.stringify({ error: LOST_RESPONSE_MESSAGE }))
          await idempotencyKeysRepository.replaceSealedResponse(tx, { ...kept, responseSealed: lost, statusCode: 409 })
          rotation.discardedResponses++
        } else if (responseSealed !== undefined && responseSealed !== kept.responseSealed) {
          await idempotencyKeysRepository.replaceSealedResponse(tx, { ...kept, responseSealed })
        }
      }
      if (page.length < RESPONSES_A_PAGE) break
      after = page.at(-1)
    }
    if (generated !== undefined) await settingsRepository.remove(tx, GENERATED_SECRET_KEY)
    return rotation
  })
}

/**
 * Throws when `serverSecret` does not open what the database holds sealed: the newest webhook secret, and the newest
 * kept response (each sealed under the secret the service last ran with). An instance started with another secret
 * (a mistyped SESSION_SECRET, one instance configured apart from the rest) would fail every delivery and answer 500 to
 * every replay: it is refused before it takes any request. A database without sealed values passes.
 */
export async function assertServerSecretOpensSealed(db: DbOrTx, serverSecret: string): Promise<void> {
  const box = createSecretBox(serverSecret)
  const webhook = await webhooksRepository.newestSealedSecret(db)
  const kept = await idempotencyKeysRepository.newestSealedResponse(db)
  const unreadable =
    webhook !== undefined && !opens(box, webhook.secretCiphertext)
      ? `the secret of webhook ${webhook.id}`
      : kept !== undefined && !opens(box, kept)
        ? 'the responses kept with Idempotency-Keys'
        : undefined
  if (unreadable === undefined) return
  throw new ServerSecretMismatchError(
    `The server secret does not open ${unreadable}: SESSION_SECRET is not the secret the service ran with. Start with that secret; to move to this one, run \`countersign rotate-secret\` with the old one as OLD_SESSION_SECRET (or unset, to rotate from the secret generated in the database); if it is lost, \`countersign rotate-secret --discard-unreadable\` (docs/deployment.md)`,
  )
}

export class ServerSecretMismatchError extends Error {
  override name = 'ServerSecretMismatchError'
}

/** Kept responses read a page at a time: a day of creations with keys can be many rows. */
const RESPONSES_A_PAGE = 1_000

/**
 * A sealed value under the new secret: as it is when it already opens under it, re-sealed when it opens under the
 * old one; undefined when it opens under neither (a previous secret left by an earlier rotation, which did not re-seal
 * those), which no instance can read either way.
 */
function underNewSecret(oldBox: SecretBox | undefined, newBox: SecretBox, sealed: string): string | undefined {
  if (opens(newBox, sealed)) return sealed
  if (oldBox === undefined || !opens(oldBox, sealed)) return undefined
  return newBox.seal(oldBox.open(sealed))
}

function opens(box: SecretBox, sealed: string): boolean {
  try {
    box.open(sealed)
    return true
  } catch {
    return false
  }
}
