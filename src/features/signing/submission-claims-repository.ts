// Claims on submitting a signAndSubmit payload's transaction: one signed blob at a time per payload, across instances.
// A claim is also the submission's intent: it holds what resolves the payload as signed, so that a submission whose
// instance died after the node accepted the blob is recovered (submission-recovery.ts) instead of lost.
import type { DeleteQueryBuilder, DeleteResult } from 'kysely'
import type { Db, DbOrTx } from '../../platform/db/database.js'
import type { Database } from '../../platform/db/schema.js'

/** What a submission resolves its payload with, written before the blob goes to the node. */
export interface SubmissionIntent {
  payloadUuid: string
  txHash: string
  txBlob: string
  signerAddress: string
  walletAdapter: string
  proofKey: string
  submittedAtMs: number
}

/** A claim whose holder's lease lapsed; the intent is null on claims taken before intents were recorded. */
export interface LapsedClaim {
  payloadUuid: string
  txHash: string
  leaseExpiresAtMs: number
  intent: SubmissionIntent | null
}

export const submissionClaimsRepository = {
  /**
   * Claims the payload's submission of `intent.txHash` until `leaseExpiresAtMs`, recording the intent. Succeeds when no
   * claim is held, or when the held one is for the same transaction: submitting one signed blob twice is harmless, the
   * ledger applies it once. A claim for another transaction is never taken over, even lapsed: its blob may have
   * reached the ledger, and only the recovery, which asks the node, releases it.
   *
   * Returns undefined when refused; otherwise whether a claim for the same transaction was there already, decided by
   * this one statement: a submission of this request's may be on the ledger. That claim keeps its first submission's
   * time (the recovery resolves the payload if it had not expired then).
   */
  async claim(db: Db, intent: SubmissionIntent, leaseExpiresAtMs: number): Promise<{ submittedBefore: boolean } | undefined> {
    return db.transaction().execute(async (tx) => {
      // The payload's row first, marked: a move out of pending that wrote it before waits for this commit to be seen,
      // and a claim on a payload no longer pending is refused. Every claim's write takes the row before the claim's.
      const marked = await tx
        .updateTable('payloads')
        .set({ submission_claimed: 1 })
        .where('uuid', '=', intent.payloadUuid)
        .where('status', '=', 'pending')
        .executeTakeFirst()
      if (marked.numUpdatedRows === 0n) return undefined
      const row = await tx
        .insertInto('submission_claims')
        .values({
          payload_uuid: intent.payloadUuid,
          tx_hash: intent.txHash,
          lease_expires_at: leaseExpiresAtMs,
          tx_blob: intent.txBlob,
          signer_address: intent.signerAddress,
          wallet_adapter: intent.walletAdapter,
          proof_key: intent.proofKey,
          submitted_at: intent.submittedAtMs,
        })
        .onConflict((oc) =>
          oc
            .column('payload_uuid')
            .doUpdateSet((eb) => ({ lease_expires_at: leaseExpiresAtMs, attempts: eb('submission_claims.attempts', '+', 1) }))
            .where((eb) => eb('submission_claims.tx_hash', '=', intent.txHash)),
        )
        .returning('attempts')
        .executeTakeFirst()
      // Refused for another blob's claim: the row stays marked, for that one.
      return row === undefined ? undefined : { submittedBefore: row.attempts > 1 }
    })
  },

  async release(db: Db, payloadUuid: string, txHash: string): Promise<void> {
    await releaseWhere(db, payloadUuid, (query) => query.where('tx_hash', '=', txHash))
  },

  /** Claims whose lease lapsed at `nowMs`: their holder died, or gave up without knowing whether the node took the blob. */
  async findLapsed(db: DbOrTx, nowMs: number, limit: number): Promise<LapsedClaim[]> {
    const rows = await db
      .selectFrom('submission_claims')
      .selectAll()
      .where('lease_expires_at', '<=', nowMs)
      .orderBy('lease_expires_at')
      .limit(limit)
      .execute()
    return rows.map((row) => ({
      payloadUuid: row.payload_uuid,
      txHash: row.tx_hash,
      leaseExpiresAtMs: row.lease_expires_at,
      intent:
        row.tx_blob === null ||
        row.signer_address === null ||
        row.wallet_adapter === null ||
        row.proof_key === null ||
        row.submitted_at === null
          ? null
          : {
              payloadUuid: row.payload_uuid,
              txHash: row.tx_hash,
              txBlob: row.tx_blob,
              signerAddress: row.signer_address,
              walletAdapter: row.wallet_adapter,
              proofKey: row.proof_key,
              submittedAtMs: row.submitted_at,
            },
    }))
  },

  /**
   * Takes a lapsed claim over until `leaseExpiresAtMs` (compare-and-set on its lease: one instance wins). Returns the
   * claim as now held, or undefined when another instance, or a new submission of the same blob, took it first.
   */
  async takeOver(db: DbOrTx, claim: LapsedClaim, leaseExpiresAtMs: number): Promise<LapsedClaim | undefined> {
    const result = await db
      .updateTable('submission_claims')
      .set({ lease_expires_at: leaseExpiresAtMs })
      .where('payload_uuid', '=', claim.payloadUuid)
      .where('tx_hash', '=', claim.txHash)
      .where('lease_expires_at', '=', claim.leaseExpiresAtMs)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n ? { ...claim, leaseExpiresAtMs } : undefined
  },

  /** Ends a claim taken over, while it is still held as taken (a new submission of the same blob keeps its own). */
  async releaseHeld(db: Db, claim: LapsedClaim): Promise<void> {
    await releaseWhere(db, claim.payloadUuid, (query) =>
      query.where('tx_hash', '=', claim.txHash).where('lease_expires_at', '=', claim.leaseExpiresAtMs),
    )
  },
}

type ClaimDelete = DeleteQueryBuilder<Database, 'submission_claims', DeleteResult>

/**
 * Deletes the payload's claim where `which` says, and unmarks the payload's row unless a claim is left: the row first,
 * as a claim takes it, so that the two never wait on each other in opposite orders.
 */
async function releaseWhere(db: Db, payloadUuid: string, which: (query: ClaimDelete) => ClaimDelete): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx.updateTable('payloads').set({ submission_claimed: 0 }).where('uuid', '=', payloadUuid).execute()
    await which(tx.deleteFrom('submission_claims').where('payload_uuid', '=', payloadUuid)).execute()
    await tx
      .updateTable('payloads')
      .set({ submission_claimed: 1 })
      .where('uuid', '=', payloadUuid)
      .where((eb) => eb.exists(eb.selectFrom('submission_claims').select('payload_uuid').where('payload_uuid', '=', payloadUuid)))
      .execute()
  })
}
