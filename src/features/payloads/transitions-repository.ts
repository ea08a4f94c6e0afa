// Payload moves: out of pending, a multisigned payload's signatures, and the final outcome of a submission. Every move
// out of pending is a conditional UPDATE (WHERE status = 'pending'), so that of two racing transitions exactly one
// wins, on SQLite and on PostgreSQL alike; on PostgreSQL the moves of a group are one such statement.
import { type Selectable, sql } from 'kysely'
import type { DbOrTx, Dialect } from '../../platform/db/database.js'
import { asColumns, HotQuery } from '../../platform/db/hot-query.js'
import { COLUMNS, type PayloadsTable } from '../../platform/db/schema.js'
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

/** A move out of pending, as its caller asked for it. */
export interface PendingMove {
  uuid: string
  changes: TransitionChanges
  condition?: TransitionCondition
}

type ResolutionColumn = 'wallet_adapter' | 'signer_address' | 'tx_hash' | 'tx_blob' | 'public_key' | 'signature' | 'submit_engine_result'

/**
 * What a move writes and when it may: every resolution column, null where the change has none (a pending payload has
 * them all null, so this is the same as writing only the change's own). `notExpiredAtMs` is the lowest safe integer
 * when there is no condition; `multisignedToo` is 1 unless the move is for a payload that is not multisigned.
 */
type ResolutionParams = Required<Pick<PayloadsTable, ResolutionColumn>> & {
  status: ResolvedStatus
  resolved_at: number
  uuid: string
  notExpiredAtMs: number
  multisignedToo: 0 | 1
}

function resolutionParams({ uuid, changes, condition = {} }: PendingMove): ResolutionParams {
  const signed = changes.signed
  return {
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
  }
}

/**
 * One move (SQLite): the payload is pending, the move's conditions hold, and it is to signed or no submission claim is
 * held (`submission_claimed`, features/signing/submission-claims-repository.ts): while one is, a signed transaction of
 * the payload's may be on the ledger without the payload recording it yet, and a rejection or an expiry waits.
 */
const resolvePending = new HotQuery((db, p: ResolutionParams) =>
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
    .where((eb) => eb.or([eb(eb.val(p.status), '=', 'signed'), eb('submission_claimed', '=', 0)]))
    .returning(COLUMNS.payloads),
)

/** Moves of different payloads as one array a column (PostgreSQL): `all_uuid` holds their uuids in order, and so on. */
type ResolutionArrays = { [K in keyof ResolutionParams as `all_${K}`]: ResolutionParams[K][] }

/**
 * Several moves in one statement (PostgreSQL), with resolvePending's conditions, each payload at most once. The moves go
 * in as one array a column (unnest), so that the text is the same for any number of moves and runs as a prepared
 * statement (platform/db/hot-query.ts). The rows of the payloads still pending are locked first, in the order of their
 * uuids ("C": byte order, the order in which transitions.ts sorts the service's ASCII uuids), whatever plan the update
 * gets: groups written at once then lock their rows in one order and do not deadlock. A row reaches the update only
 * through its `locked` row, which the rows before it precede. A payload no longer pending is not locked, as the
 * one-move update does not lock it: a reject sent again to a signed payload holds nothing while its group is written.
 */
const resolvePendingAll = new HotQuery(
  (_db, p: ResolutionArrays) => sql<Selectable<PayloadsTable>>`
    with locked as materialized (
      select uuid from payloads where uuid = any(${p.all_uuid}::text[]) and status = 'pending'
      order by uuid collate "C" for no key update
    )
    update payloads set status = m.status, resolved_at = m.resolved_at, wallet_adapter = m.wallet_adapter,
      signer_address = m.signer_address, tx_hash = m.tx_hash, tx_blob = m.tx_blob, public_key = m.public_key,
      signature = m.signature, submit_engine_result = m.submit_engine_result
    from unnest(${p.all_uuid}::text[], ${p.all_status}::text[], ${p.all_resolved_at}::bigint[], ${p.all_wallet_adapter}::text[],
      ${p.all_signer_address}::text[], ${p.all_tx_hash}::text[], ${p.all_tx_blob}::text[], ${p.all_public_key}::text[],
      ${p.all_signature}::text[], ${p.all_submit_engine_result}::text[], ${p.all_notExpiredAtMs}::bigint[],
      ${p.all_multisignedToo}::int[])
      as m(uuid, status, resolved_at, wallet_adapter, signer_address, tx_hash, tx_blob, public_key, signature,
        submit_engine_result, not_expired_at, multisigned_too)
    inner join locked on locked.uuid = m.uuid
    where payloads.uuid = m.uuid and payloads.status = 'pending' and payloads.expires_at > m.not_expired_at
      and (payloads.multisign_json is null or m.multisigned_too = 1)
      and (m.status = 'signed' or payloads.submission_claimed = 0)
    returning ${sql.join(COLUMNS.payloads.map((column) => sql.ref(`payloads.${column}`)))}`,
)

export const payloadTransitionsRepository = {
  /**
   * Whether a signed transaction of the payload's may be on the ledger without the payload recording it yet: a
   * submission claim is held (features/signing/submission-claims-repository.ts). Such a payload does not expire until
   * the claim is released (resolved as signed, or released once the ledger can never apply it).
   */
  async submissionInDoubt(db: DbOrTx, uuid: string): Promise<boolean> {
    const row = await db.selectFrom('submission_claims').select('payload_uuid').where('payload_uuid', '=', uuid).executeTakeFirst()
    return row !== undefined
  },

  /**
   * Moves pending payloads, each at most once, to a resolved status, each if its `condition` holds: one statement on
   * PostgreSQL, one a move on SQLite (in-process, with no round trip to share). Returns what each moved, in the order
   * of `moves`: the updated payload, or undefined when another transition got there first or the condition does not hold.
   */
  async transitionAll(db: DbOrTx, dialect: Dialect, moves: readonly PendingMove[]): Promise<(Payload | undefined)[]> {
    if (dialect === 'sqlite') {
      const moved: (Payload | undefined)[] = []
      for (const move of moves) {
        const row = await resolvePending.executeTakeFirst(db, resolutionParams(move))
        moved.push(row && rowToPayload(row))
      }
      return moved
    }
    if (moves.length === 0) return []
    const params = moves.map(resolutionParams)
    // One statement cannot move a payload twice: it would take either move's changes and report both as made.
    if (new Set(params.map((one) => one.uuid)).size < params.length) throw new Error('transitionAll moves each payload at most once')
    const byUuid = new Map((await resolvePendingAll.execute(db, asColumns(params, 'all_'))).map((row) => [row.uuid, rowToPayload(row)]))
    return moves.map((move) => byUuid.get(move.uuid))
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
      .where('submission_claimed', '=', 0)
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
        validated_tx_hash: final.txHash,
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
