// `countersign rotate-secret`: re-seals every webhook secret under a new server secret, in one transaction, and
// forgets the secret the embedded quick start generated, so that the database alone no longer opens them. What else
// is sealed under the server secret goes with them: a rotated webhook's previous secret (it signs beside the new one
// for 24 hours) and the responses kept with Idempotency-Keys (a webhook's creation response holds its secret).
//
// And the check every instance makes at start that its server secret is the one these were sealed under: under
// another, each delivery fails and each replay of a kept response would answer 500.

import { createSecretBox, type SecretBox } from '../../platform/crypto/secret-box.js'
import type { Db, DbOrTx } from '../../platform/db/database.js'
import { idempotencyKeysRepository } from '../../platform/db/idempotency-keys-repository.js'
import { GENERATED_SECRET_KEY, loadServerSecret, settingsRepository } from '../../platform/db/settings-repository.js'
import { LOST_RESPONSE_MESSAGE } from '../../platform/http/idempotency.js'
import { webhookDeliveriesRepository } from './deliveries-repository.js'
import { webhooksRepository } from './repository.js'
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
  /** Responses kept with Idempotency-Keys (each holds what it answered, a webhook's secret included), now under the new secret. */
  resealedResponses: number
  /** With discardUnreadable: kept responses that opened under neither secret, now a 409 that says so. */
  discardedResponses: number
  /** With discardUnreadable: secrets a webhook's rotation replaced that opened under neither, dropped. */
  discardedPrevious: number
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

/**
 * The old secrets are `oldSecret` and the generated one in the database, whichever exist: a database may hold values
 * sealed under both (an instance started with SESSION_SECRET before the generated one was rotated away), and a value
 * given up while a secret at hand opens it is lost for good. With discardUnreadable there may be none. Nothing changes
 * on any failure.
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
    const oldSecrets = [...new Set([oldSecret, generated].filter((secret) => secret !== undefined))]
    if (oldSecrets.length === 0 && !discardUnreadable) {
      throw new SecretRotationError(
        'No old secret: set OLD_SESSION_SECRET to the SESSION_SECRET the service ran with until now (the database holds no generated one); if it is lost, add --discard-unreadable',
      )
    }
    const sealing = new Resealing(oldSecrets.map(createSecretBox), createSecretBox(newSecret))
    const rotation = {
      resealed: 0,
      alreadyCurrent: 0,
      removedGenerated: generated !== undefined,
      discardedSecrets: [] as string[],
      resealedResponses: 0,
      discardedResponses: 0,
      discardedPrevious: 0,
    }
    for (const { id, secretCiphertext, previousSecretCiphertext } of await webhooksRepository.listSealedSecrets(tx)) {
      const current = sealing.underNewSecret(secretCiphertext)
      if (current === undefined) {
        if (!discardUnreadable) {
          throw new SecretRotationError(
            `The secret of webhook ${id} opens under neither the old nor the new secret; nothing was changed. Check OLD_SESSION_SECRET (if it is lost, --discard-unreadable gives such webhooks new secrets and disables them)`,
          )
        }
        // As any disabled webhook: what waits for it is cancelled, to be replayed once its project has enabled it. Its
        // previous secret goes with the lost one.
        const nowMs = options.nowMs ?? Date.now()
        await webhooksRepository.replaceLostSecret(tx, id, sealing.newBox.seal(newWebhookSecret()), nowMs, LOST_SECRET_REASON)
        await webhookDeliveriesRepository.cancelPendingForWebhook(tx, id, nowMs)
        rotation.discardedSecrets.push(id)
        continue
      }
      // A previous secret that opens under none is left as it is (an earlier rotation did not re-seal those, and no
      // instance can sign with it either way); discarded, it is dropped.
      const reopened = previousSecretCiphertext === null ? null : sealing.underNewSecret(previousSecretCiphertext)
      if (reopened === undefined && discardUnreadable) rotation.discardedPrevious++
      const previous = reopened ?? (discardUnreadable ? null : previousSecretCiphertext)
      if (current === secretCiphertext) rotation.alreadyCurrent++
      else rotation.resealed++
      if (current !== secretCiphertext || previous !== previousSecretCiphertext) {
        await webhooksRepository.replaceSealedSecrets(tx, id, { secretCiphertext: current, previousSecretCiphertext: previous })
      }
    }
    for (let after: { projectId: string; key: string } | undefined; ; ) {
      const page = await idempotencyKeysRepository.listSealedResponses(tx, after, RESPONSES_A_PAGE)
      for (const kept of page) {
        const responseSealed = sealing.underNewSecret(kept.responseSealed)
        if (responseSealed === undefined) {
          if (!discardUnreadable) {
            throw new SecretRotationError(
              `The response kept with Idempotency-Key ${JSON.stringify(kept.key)} of project ${kept.projectId} opens under neither the old nor the new secret; nothing was changed. Check OLD_SESSION_SECRET (if it is lost, --discard-unreadable makes such keys answer 409)`,
            )
          }
          const lost = sealing.newBox.seal(JSON.stringify({ error: LOST_RESPONSE_MESSAGE }))
          await idempotencyKeysRepository.replaceSealedResponse(tx, { ...kept, responseSealed: lost, statusCode: 409 })
          rotation.discardedResponses++
        } else if (responseSealed !== kept.responseSealed) {
          await idempotencyKeysRepository.replaceSealedResponse(tx, { ...kept, responseSealed })
          rotation.resealedResponses++
        }
      }
      if (page.length < RESPONSES_A_PAGE) break
      after = page.at(-1)
    }
    // A mistyped OLD_SESSION_SECRET with the flag would give up everything it should have opened (what the generated
    // secret opens, in a mixed database, says nothing of it: OLD_SESSION_SECRET is the first box).
    const discarded = rotation.discardedSecrets.length + rotation.discardedResponses + rotation.discardedPrevious
    if (oldSecret !== undefined && sealing.openedUnder[0] === 0 && discarded > 0) {
      throw new SecretRotationError(
        'OLD_SESSION_SECRET opens none of the sealed values, and --discard-unreadable would give up those the new secret does not open; nothing was changed. Check OLD_SESSION_SECRET, or leave it unset to give them up',
      )
    }
    if (generated !== undefined) await settingsRepository.remove(tx, GENERATED_SECRET_KEY)
    return rotation
  })
}

/**
 * The server secret an instance runs with (SESSION_SECRET, or the one generated in the database, generated now when
 * there is none), once it is shown to open what the database holds sealed: the newest webhook secret, and the newest
 * kept response (each sealed under the secret the service last ran with). An instance started with another secret (a
 * mistyped SESSION_SECRET, one instance configured apart from the rest) would fail every delivery: it is refused
 * before it takes any request. The check comes before a secret is generated, which would open nothing sealed.
 */
export async function openServerSecret(db: DbOrTx, configured: string | undefined): Promise<string> {
  const generated = configured === undefined ? await settingsRepository.get(db, GENERATED_SECRET_KEY) : undefined
  const unreadable = await unreadableUnder(db, configured ?? generated)
  if (unreadable !== undefined) {
    throw new ServerSecretMismatchError(
      configured !== undefined
        ? `The server secret does not open ${unreadable}: SESSION_SECRET is not the secret it was sealed under. Start with that secret; to move to this one, run \`countersign rotate-secret\` with that one as OLD_SESSION_SECRET; if it is lost, add --discard-unreadable (docs/deployment.md)`
        : generated !== undefined
          ? `SESSION_SECRET is not set, and the secret generated in the database does not open ${unreadable}: start with the SESSION_SECRET it was sealed under (docs/deployment.md)`
          : `SESSION_SECRET is not set, and the database holds values sealed under one (${unreadable}): start with that SESSION_SECRET (docs/deployment.md)`,
    )
  }
  return loadServerSecret(db, configured)
}

/** What of the database's newest sealed values `serverSecret` does not open (undefined: none; no secret opens nothing). */
async function unreadableUnder(db: DbOrTx, serverSecret: string | undefined): Promise<string | undefined> {
  const box = serverSecret === undefined ? undefined : createSecretBox(serverSecret)
  const webhook = await webhooksRepository.newestSealedSecret(db)
  const kept = await idempotencyKeysRepository.newestSealedResponse(db)
  if (webhook !== undefined && (box === undefined || !opens(box, webhook.secretCiphertext)))
    return `the secret of webhook ${webhook.id}, the newest`
  if (kept !== undefined && (box === undefined || !opens(box, kept))) return 'the newest response kept with an Idempotency-Key'
  return undefined
}

export class ServerSecretMismatchError extends Error {
  override name = 'ServerSecretMismatchError'
}

/** Kept responses read a page at a time: a day of creations with keys can be many rows. */
const RESPONSES_A_PAGE = 1_000

/** Sealed values as the new secret opens them, re-sealed from whichever old secret opens them. */
class Resealing {
  /** How many values each old secret opened, in the order of the boxes. */
  readonly openedUnder: number[]

  constructor(
    private readonly oldBoxes: readonly SecretBox[],
    readonly newBox: SecretBox,
  ) {
    this.openedUnder = oldBoxes.map(() => 0)
  }

  /** As it is when it opens under the new secret, re-sealed when it opens under an old one; undefined under none. */
  underNewSecret(sealed: string): string | undefined {
    if (opens(this.newBox, sealed)) return sealed
    const index = this.oldBoxes.findIndex((box) => opens(box, sealed))
    const oldBox = this.oldBoxes[index]
    if (oldBox === undefined) return undefined
    this.openedUnder[index] = (this.openedUnder[index] ?? 0) + 1
    return this.newBox.seal(oldBox.open(sealed))
  }
}

function opens(box: SecretBox, sealed: string): boolean {
  try {
    box.open(sealed)
    return true
  } catch {
    return false
  }
}
