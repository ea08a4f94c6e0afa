// Submitted transactions followed to their final outcome: durable jobs under the outbox lease protocol, so that one
// instance follows each transaction at a time, another takes over when it dies, and a restart loses nothing.
import type { Selectable } from 'kysely'
import type { DbOrTx, Dialect } from '../../platform/db/database.js'
import { claimDueRows, claimHolds, claimOf } from '../../platform/db/outbox.js'
import type { TransactionFollowsTable } from '../../platform/db/schema.js'

export interface TransactionFollow {
  /** The payload's uuid. */
  payloadUuid: string
  txHash: string
  lastLedgerSequence: number | null
  /** Without LastLedgerSequence: looked at every FOLLOW_INTERVAL_MS until then, then every SLOW_FOLLOW_INTERVAL_MS. */
  followUntilMs: number
  /** Without LastLedgerSequence: the first ledger that can hold it, once its Sequence (or Ticket) was seen unused. */
  earliestLedger: number | null
  attempts: number
  leaseExpiresAtMs: number | null
}

const toFollow = (row: Selectable<TransactionFollowsTable>): TransactionFollow => ({
  payloadUuid: row.id,
  txHash: row.tx_hash,
  lastLedgerSequence: row.last_ledger_sequence,
  followUntilMs: row.follow_until,
  earliestLedger: row.earliest_ledger,
  attempts: row.attempts,
  leaseExpiresAtMs: row.lease_expires_at,
})

const claimOfFollow = (follow: TransactionFollow) =>
  claimOf({ id: follow.payloadUuid, attempts: follow.attempts, leaseExpiresAtMs: follow.leaseExpiresAtMs })

export const transactionFollowsRepository = {
  async insert(
    db: DbOrTx,
    follow: { payloadUuid: string; txHash: string; lastLedgerSequence: number | null; followUntilMs: number; nowMs: number },
  ): Promise<void> {
    await db
      .insertInto('transaction_follows')
      .values({
        id: follow.payloadUuid,
        tx_hash: follow.txHash,
        last_ledger_sequence: follow.lastLedgerSequence,
        follow_until: follow.followUntilMs,
        earliest_ledger: null,
        state: 'pending',
        attempts: 0,
        next_attempt_at: follow.nowMs,
        lease_expires_at: null,
        created_at: follow.nowMs,
        finished_at: null,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute()
  },

  /** Due follows, and follows whose follower's lease expired, moved to 'sending' (see claimDueRows). */
  async claimDue(
    db: DbOrTx,
    dialect: Dialect,
    claim: { nowMs: number; leaseExpiresAtMs: number; limit: number },
  ): Promise<TransactionFollow[]> {
    return (await claimDueRows(db, dialect, 'transaction_follows', claim)).map(toFollow)
  },

  /**
   * The follow goes on: its next look is due at `nextAttemptAtMs`, with the first ledger that can hold the transaction
   * when the look learned it. False when the claim no longer holds.
   */
  async postpone(db: DbOrTx, follow: TransactionFollow, nextAttemptAtMs: number, earliestLedger = follow.earliestLedger): Promise<boolean> {
    const result = await db
      .updateTable('transaction_follows')
      .set({
        state: 'pending',
        attempts: follow.attempts + 1,
        next_attempt_at: nextAttemptAtMs,
        lease_expires_at: null,
        earliest_ledger: earliestLedger,
      })
      .where(claimHolds(claimOfFollow(follow)))
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  },

  /**
   * A transaction without LastLedgerSequence cannot be in a ledger before `earliestLedger` (its submission's answer
   * says so): kept unless the follow knows a later one.
   */
  async raiseEarliestLedger(db: DbOrTx, payloadUuid: string, earliestLedger: number): Promise<void> {
    await db
      .updateTable('transaction_follows')
      .set({ earliest_ledger: earliestLedger })
      .where('id', '=', payloadUuid)
      .where((eb) => eb.or([eb('earliest_ledger', 'is', null), eb('earliest_ledger', '<', earliestLedger)]))
      .execute()
  },

  /** The follow is over: its outcome is recorded. False when the claim no longer holds. */
  async finish(db: DbOrTx, follow: TransactionFollow, nowMs: number): Promise<boolean> {
    const result = await db
      .updateTable('transaction_follows')
      .set({ state: 'done', attempts: follow.attempts + 1, lease_expires_at: null, finished_at: nowMs })
      .where(claimHolds(claimOfFollow(follow)))
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  },
}
