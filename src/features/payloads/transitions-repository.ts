// Payload moves: out of pending, a multisigned payload's signatures, and the final outcome of a submission. Every move
// out of pending is one conditional UPDATE (WHERE status = 'pending'), so that of two racing transitions exactly one
// wins, on SQLite and on PostgreSQL alike.
import type { DbOrTx, Dialect } from '../../platform/db/database.js'
import { HotQuery } from '../../platform/db/hot-query.js'
import type { PayloadsTable } from '../../platform/db/schema.js'
import type { MultisignState } from '../signing/multisign/model.js'
import type { FinalOutcome, Payload, ResolvedStatus, SignedResolution } from './model.js'
import { rowToPayload } from './repository.js'

/** What a move out of pending writes. */
export interface TransitionChanges {
  status: ResolvedStatus
  resolvedAtMs: number
  signed?: SignedResolution
  rejectedBy?: string
}

/** When a move out of pending may happen, beyond the payload being pending. */
export interface TransitionCondition {
  /** The payload has not expired at this instant (a wallet acting at the last instant loses to the clock). */
  notExpiredAtMs?: number
  /** The payload is not multisigned (a rejection with no signer named, which only a single-signer request takes). */
  notMultisigned?: boolean
}

/**
 * Every resolution column is written, null where the change has none: a pending payload has them all null, so this
 * is the same as writing only the change's own. `notExpiredAtMs` is the lowest safe integer when there is no condition;
 * `multisignedToo` is 1 unless the move is for a payload that is not multisigned.
 */
const resolvePending = new HotQuery(
  (
    db,
    p: Required<Pick<PayloadsTable, ResolutionColumn>> & {
      status: ResolvedStatus
      resolved_at: number
      uuid: string
      notExpiredAtMs: number
      multisignedToo: 0 | 1
    },
  ) =>
    db
      .updateTable('payloads')
      .set({
        status: p.status,
        resolved_at: p.resolved_at,
        wallet_adapter: p.wallet_adapter,
        signer_address: p.signer_address,
        tx_hash: p.tx_hash,
        tx_blob: p.tx_blob,
        public_key: p.public_key,
        signature: p.signature,
        submit_engine_result: p.submit_engine_result,
      })
      .where('uuid', '=', p.uuid)
      .where('status', '=', 'pending')
      .where('expires_at', '>', p.notExpiredAtMs)
      .where((eb) => eb.or([eb('multisign_json', 'is', null), eb(eb.val(p.multisignedToo), '=', 1)]))
      .returningAll(),
)
type ResolutionColumn = 'wallet_adapter' | 'signer_address' | 'tx_hash' | 'tx_blob' | 'public_key' | 'signature' | 'submit_engine_result'

export const payloadTransitionsRepository = {
  /**
   * Moves a pending payload to a resolved status, if `condition` holds. Returns the updated payload, or undefined when
   * another transition got there first or the condition does not hold.
   */
  async transition(
    db: DbOrTx,
    uuid: string,
    changes: TransitionChanges,
    condition: TransitionCondition = {},
  ): Promise<Payload | undefined> {
    const signed = changes.signed
    const row = await resolvePending.executeTakeFirst(db, {
      uuid,
      notExpiredAtMs: condition.notExpiredAtMs ?? Number.MIN_SAFE_INTEGER,
      multisignedToo: condition.notMultisigned ? 0 : 1,
      status: changes.status,
      resolved_at: changes.resolvedAtMs,
      wallet_adapter: signed?.walletAdapter ?? changes.rejectedBy ?? null,
      signer_address: signed?.signerAddress ?? null,
      tx_hash: signed?.txHash ?? null,
      tx_blob: signed?.txBlob ?? null,
      public_key: signed?.publicKey ?? null,
      signature: signed?.signature ?? null,
      submit_engine_result: signed?.submitEngineResult ?? null,
    })
    return row && rowToPayload(row)
  },

  /**
   * Expires up to `limit` pending payloads whose time has passed; returns the ones this call moved. On PostgreSQL it
   * passes over payload rows that another transaction is changing (a group of moves, another instance's sweeper)
   * instead of waiting for them, and what it passed over is expired by its mover or by the next sweep. Its lock is the
   * one its UPDATE takes (FOR NO KEY UPDATE), so a row that another transaction only references (a proof or a follow
   * being inserted) is not passed over, nor does that insert wait for the sweep. The daily counts it then writes are
   * taken in one order, after the payload rows, as a group of moves takes them: the two cannot deadlock.
   */
  async expireOverdue(db: DbOrTx, dialect: Dialect, nowMs: number, limit: number): Promise<Payload[]> {
    let overdue = db
      .selectFrom('payloads')
      .select('uuid')
      .where('status', '=', 'pending')
      .where('expires_at', '<=', nowMs)
      .orderBy('expires_at')
      .limit(limit)
    if (dialect === 'postgres') overdue = overdue.forNoKeyUpdate().skipLocked()
    const rows = await db
      .updateTable('payloads')
      .set({ status: 'expired', resolved_at: nowMs })
      .where('uuid', 'in', overdue)
      .where('status', '=', 'pending')
      .returningAll()
      .execute()
    return rows.map(rowToPayload)
  },

  /** Records a signAndSubmit transaction's final outcome, once: returns the payload, or undefined when one was already recorded. */
  async recordOutcome(db: DbOrTx, uuid: string, final: FinalOutcome): Promise<Payload | undefined> {
    const row = await db
      .updateTable('payloads')
      .set({
        outcome: final.outcome,
        validated_result: final.transactionResult,
        validated_ledger_index: final.ledgerIndex,
        delivered_amount: final.deliveredAmount === null ? null : JSON.stringify(final.deliveredAmount),
      })
      .where('uuid', '=', uuid)
      .where('outcome', 'is', null)
      .returningAll()
      .executeTakeFirst()
    return row && rowToPayload(row)
  },

  /**
   * Replaces a pending multisigned payload's state if it is still `expected` (compare-and-set: of two racing
   * signatures one wins, the other reads again). Undefined when the state moved, or the payload was resolved or expired.
   */
  async replaceMultisign(
    db: DbOrTx,
    uuid: string,
    change: { expected: MultisignState; next: MultisignState; notExpiredAtMs: number },
  ): Promise<Payload | undefined> {
    const row = await db
      .updateTable('payloads')
      .set({ multisign_json: JSON.stringify(change.next) })
      .where('uuid', '=', uuid)
      .where('status', '=', 'pending')
      .where('expires_at', '>', change.notExpiredAtMs)
      .where('multisign_json', '=', JSON.stringify(change.expected))
      .returningAll()
      .executeTakeFirst()
    return row && rowToPayload(row)
  },
}
