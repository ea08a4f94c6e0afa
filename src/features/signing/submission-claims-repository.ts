// Claims on submitting a signAndSubmit payload's transaction: one signed blob at a time per payload, across instances.
import type { DbOrTx } from '../../platform/db/database.js'

export const submissionClaimsRepository = {
  /**
   * Claims the payload's submission for `txHash` until `leaseExpiresAtMs`. Succeeds when no claim is held, when the
   * held one has lapsed (its holder crashed), or when it is for the same transaction: submitting one signed blob twice
   * is harmless, the ledger applies it once. Returns whether the claim is now held.
   */
  async claim(db: DbOrTx, claim: { payloadUuid: string; txHash: string; nowMs: number; leaseExpiresAtMs: number }): Promise<boolean> {
    const row = await db
      .insertInto('submission_claims')
      .values({ payload_uuid: claim.payloadUuid, tx_hash: claim.txHash, lease_expires_at: claim.leaseExpiresAtMs })
      .onConflict((oc) =>
        oc
          .column('payload_uuid')
          .doUpdateSet({ tx_hash: claim.txHash, lease_expires_at: claim.leaseExpiresAtMs })
          .where((eb) =>
            eb.or([eb('submission_claims.lease_expires_at', '<=', claim.nowMs), eb('submission_claims.tx_hash', '=', claim.txHash)]),
          ),
      )
      .returning('payload_uuid')
      .executeTakeFirst()
    return row !== undefined
  },

  async release(db: DbOrTx, payloadUuid: string, txHash: string): Promise<void> {
    await db.deleteFrom('submission_claims').where('payload_uuid', '=', payloadUuid).where('tx_hash', '=', txHash).execute()
  },
}
