// The signatures and signed transactions that resolved a payload: each resolves one payload, ever, on every instance
// (the table's primary key decides, not a check in one process).
import type { DbOrTx } from '../../platform/db/database.js'

export const payloadProofsRepository = {
  /** Records the proof for the payload; false when it already resolved a payload (this one included). */
  async record(db: DbOrTx, proof: { proofKey: string; payloadUuid: string; nowMs: number }): Promise<boolean> {
    const row = await db
      .insertInto('payload_proofs')
      .values({ proof_key: proof.proofKey, payload_uuid: proof.payloadUuid, created_at: proof.nowMs })
      .onConflict((oc) => oc.column('proof_key').doNothing())
      .returning('proof_key')
      .executeTakeFirst()
    return row !== undefined
  },

  /**
   * Takes the proof for the payload unless another payload holds it: true when the payload holds it (already, or from
   * now on), false when another does.
   */
  async holdFor(db: DbOrTx, proof: { proofKey: string; payloadUuid: string; nowMs: number }): Promise<boolean> {
    if (await this.record(db, proof)) return true
    return (await this.findPayloadUuid(db, proof.proofKey)) === proof.payloadUuid
  },

  /** Whether a payload other than `payloadUuid` holds the proof. */
  async heldByAnother(db: DbOrTx, proofKey: string, payloadUuid: string): Promise<boolean> {
    const holder = await this.findPayloadUuid(db, proofKey)
    return holder !== undefined && holder !== payloadUuid
  },

  /** The payload the proof resolved, if any. */
  async findPayloadUuid(db: DbOrTx, proofKey: string): Promise<string | undefined> {
    const row = await db.selectFrom('payload_proofs').select('payload_uuid').where('proof_key', '=', proofKey).executeTakeFirst()
    return row?.payload_uuid
  },
}
