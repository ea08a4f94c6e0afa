// `countersign rotate-secret`: re-seals every webhook secret under a new server secret, in one transaction, and
// forgets the secret the embedded quick start generated, so that the database alone no longer opens them. What else
// is sealed under the server secret goes with them: a rotated webhook's previous secret (it signs beside the new one
// for 24 hours) and the responses kept with Idempotency-Keys (a webhook's creation response holds its secret).
import type { Db } from '../../platform/db/database.js'
import { idempotencyKeysRepository } from '../../platform/db/idempotency-keys-repository.js'
import { GENERATED_SECRET_KEY, settingsRepository } from '../../platform/db/settings-repository.js'
import { webhooksRepository } from './repository.js'
import { createSecretBox, type SecretBox } from './secret-box.js'

export interface SecretRotation {
  /** Webhook secrets sealed under the old secret, now under the new one. */
  resealed: number
  /** Webhook secrets already under the new secret (a rotation run twice, or webhooks created after a restart). */
  alreadyCurrent: number
  /** Whether a generated secret was removed from the database. */
  removedGenerated: boolean
}

export class SecretRotationError extends Error {
  override name = 'SecretRotationError'
}

/** The old secret is `oldSecret`, or when undefined the generated one in the database; nothing changes on any failure. */
export async function rotateServerSecret(db: Db, oldSecret: string | undefined, newSecret: string): Promise<SecretRotation> {
  return db.transaction().execute(async (tx) => {
    const generated = await settingsRepository.get(tx, GENERATED_SECRET_KEY)
    const from = oldSecret ?? generated
    if (from === undefined) {
      throw new SecretRotationError(
        'No old secret: set OLD_SESSION_SECRET to the SESSION_SECRET the service ran with until now (the database holds no generated one)',
      )
    }
    const oldBox = createSecretBox(from)
    const newBox = createSecretBox(newSecret)
    let resealed = 0
    let alreadyCurrent = 0
    for (const { id, secretCiphertext, previousSecretCiphertext } of await webhooksRepository.listSealedSecrets(tx)) {
      const previous = previousSecretCiphertext === null ? null : underNewSecret(oldBox, newBox, previousSecretCiphertext)
      if (opens(newBox, secretCiphertext)) {
        alreadyCurrent++
        if (previous !== null && previous !== previousSecretCiphertext) {
          await webhooksRepository.replaceSealedSecrets(tx, id, { secretCiphertext, previousSecretCiphertext: previous })
        }
        continue
      }
      if (!opens(oldBox, secretCiphertext)) {
        throw new SecretRotationError(
          `The secret of webhook ${id} opens under neither the old nor the new secret; nothing was changed. Check OLD_SESSION_SECRET`,
        )
      }
      await webhooksRepository.replaceSealedSecrets(tx, id, {
        secretCiphertext: newBox.seal(oldBox.open(secretCiphertext)),
        previousSecretCiphertext: previous,
      })
      resealed++
    }
    for (let after: { projectId: string; key: string } | undefined; ; ) {
      const page = await idempotencyKeysRepository.listSealedResponses(tx, after, RESPONSES_A_PAGE)
      for (const kept of page) {
        const responseSealed = underNewSecret(oldBox, newBox, kept.responseSealed)
        if (responseSealed !== kept.responseSealed) await idempotencyKeysRepository.replaceSealedResponse(tx, { ...kept, responseSealed })
      }
      if (page.length < RESPONSES_A_PAGE) break
      after = page.at(-1)
    }
    if (generated !== undefined) await settingsRepository.remove(tx, GENERATED_SECRET_KEY)
    return { resealed, alreadyCurrent, removedGenerated: generated !== undefined }
  })
}

/** Kept responses read a page at a time: a day of creations with keys can be many rows. */
const RESPONSES_A_PAGE = 1_000

/**
 * A sealed value under the new secret: as it is when it already opens under it, re-sealed when it opens under the
 * old one. One that opens under neither (a previous secret left by an earlier rotation, which did not re-seal those)
 * can be read by no instance either way, and is left as it is rather than stopping the rotation.
 */
function underNewSecret(oldBox: SecretBox, newBox: SecretBox, sealed: string): string {
  if (opens(newBox, sealed) || !opens(oldBox, sealed)) return sealed
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
