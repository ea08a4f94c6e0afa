// `countersign rotate-secret`: re-seals every webhook secret under a new server secret, in one transaction, and
// forgets the secret the embedded quick start generated, so that the database alone no longer opens them.
import type { Db } from '../../platform/db/database.js'
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
    for (const { id, secretCiphertext } of await webhooksRepository.listSealedSecrets(tx)) {
      if (opens(newBox, secretCiphertext)) {
        alreadyCurrent++
        continue
      }
      if (!opens(oldBox, secretCiphertext)) {
        throw new SecretRotationError(
          `The secret of webhook ${id} opens under neither the old nor the new secret; nothing was changed. Check OLD_SESSION_SECRET`,
        )
      }
      await webhooksRepository.replaceSealedSecret(tx, id, newBox.seal(oldBox.open(secretCiphertext)))
      resealed++
    }
    if (generated !== undefined) await settingsRepository.remove(tx, GENERATED_SECRET_KEY)
    return { resealed, alreadyCurrent, removedGenerated: generated !== undefined }
  })
}

function opens(box: SecretBox, sealed: string): boolean {
  try {
    box.open(sealed)
    return true
  } catch {
    return false
  }
}
