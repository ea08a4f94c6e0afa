// The Xaman sign requests created for payloads, until their outcome has been applied.
import { randomUUID } from 'node:crypto'
import type { Db, DbOrTx, Dialect } from '../../../platform/db/database.js'
import { lockRow } from '../../../platform/db/row-lock.js'
import { isUniqueViolation } from '../../../platform/db/unavailable.js'

/** The key of a place reserved before Xaman gives the request its uuid; no Xaman uuid starts so. */
const RESERVED_PREFIX = 'reserved:'

/**
 * A reserved place not filled or freed in this long was left by an instance that stopped while Xaman was asked (a
 * start asks Xaman for at most 10 seconds): it no longer counts, and the next reservation removes it.
 */
export const RESERVATION_LAPSES_AFTER_MS = 60_000

/** A Xaman request claimed by the worker: its lease is its own until it settles or releases it. */
export interface ClaimedXamanRequest {
  xamanUuid: string
  payloadUuid: string
  leaseExpiresAtMs: number
}

export const xamanSignRequestsRepository = {
  /**
   * Reserves a place for one more Xaman request of the payload, before Xaman is asked, unless it has `max` already
   * (reserved places count): a row under a placeholder key, settled so that the worker passes it by, until fill gives
   * it Xaman's uuid. Concurrent reservations for one payload take turns (its row locked on PostgreSQL; SQLite has one
   * writer), so that no more than `max` are ever made. Undefined when the payload has its `max`.
   */
  async reserve(db: Db, dialect: Dialect, reservation: { payloadUuid: string; nowMs: number; max: number }): Promise<string | undefined> {
    return db.transaction().execute(async (tx) => {
      await lockRow(tx, dialect, 'payloads', reservation.payloadUuid)
      await tx
        .deleteFrom('xaman_sign_requests')
        .where('payload_uuid', '=', reservation.payloadUuid)
        .where('xaman_uuid', 'like', `${RESERVED_PREFIX}%`)
        .where('created_at', '<=', reservation.nowMs - RESERVATION_LAPSES_AFTER_MS)
        .execute()
      if ((await xamanSignRequestsRepository.countForPayload(tx, reservation.payloadUuid)) >= reservation.max) return undefined
      const placeholder = `${RESERVED_PREFIX}${randomUUID()}`
      await tx
        .insertInto('xaman_sign_requests')
        .values({
          xaman_uuid: placeholder,
          payload_uuid: reservation.payloadUuid,
          created_at: reservation.nowMs,
          settled_at: reservation.nowMs,
          next_check_at: reservation.nowMs,
          lease_expires_at: null,
        })
        .execute()
      return placeholder
    })
  },

  /**
   * Gives a reserved place Xaman's uuid, due for the worker's first look. False when another request has that uuid
   * (Xaman gave it before): nothing is written then.
   */
  async fill(db: DbOrTx, placeholder: string, xamanUuid: string, nowMs: number): Promise<boolean> {
    try {
      const result = await db
        .updateTable('xaman_sign_requests')
        .set({ xaman_uuid: xamanUuid, created_at: nowMs, settled_at: null, next_check_at: nowMs })
        .where('xaman_uuid', '=', placeholder)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) === 1
    } catch (error) {
      // The key is the primary key: a uuid another request has is refused by the database itself.
      if (isUniqueViolation(error)) return false
      throw error
    }
  },

  /** Frees a reserved place whose request Xaman did not make, or made with a uuid it had given before. */
  async unreserve(db: DbOrTx, placeholder: string): Promise<void> {
    await db.deleteFrom('xaman_sign_requests').where('xaman_uuid', '=', placeholder).execute()
  },

  async countForPayload(db: DbOrTx, payloadUuid: string): Promise<number> {
    const row = await db
      .selectFrom('xaman_sign_requests')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('payload_uuid', '=', payloadUuid)
      .executeTakeFirstOrThrow()
    return Number(row.count)
  },

  /**
   * Claims up to `limit` unsettled requests due for a look (and requests whose worker's lease lapsed), the longest
   * due first, under a lease, and moves their next look to `nextCheckAtMs`: a claimed request goes to the back of the
   * queue, so that none waits behind newer ones however many there are. On PostgreSQL the rows are locked with SKIP LOCKED, so
   * that concurrent workers claim disjoint sets; SQLite has a single writer.
   */
  async claimDue(
    db: DbOrTx,
    dialect: Dialect,
    claim: { nowMs: number; leaseExpiresAtMs: number; nextCheckAtMs: number; limit: number },
  ): Promise<ClaimedXamanRequest[]> {
    let due = db
      .selectFrom('xaman_sign_requests')
      .select('xaman_uuid')
      .where('settled_at', 'is', null)
      .where('next_check_at', '<=', claim.nowMs)
      .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', claim.nowMs)]))
      .orderBy('next_check_at')
      .limit(claim.limit)
    if (dialect === 'postgres') due = due.forUpdate().skipLocked()
    const rows = await db
      .updateTable('xaman_sign_requests')
      .set({ lease_expires_at: claim.leaseExpiresAtMs, next_check_at: claim.nextCheckAtMs })
      .where('xaman_uuid', 'in', due)
      .returning(['xaman_uuid', 'payload_uuid'])
      .execute()
    return rows.map((row) => ({ xamanUuid: row.xaman_uuid, payloadUuid: row.payload_uuid, leaseExpiresAtMs: claim.leaseExpiresAtMs }))
  },

  /** Gives the request back for its next look (Xaman or the node could not answer, or the user has not signed yet). */
  async release(db: DbOrTx, claimed: ClaimedXamanRequest): Promise<void> {
    await db
      .updateTable('xaman_sign_requests')
      .set({ lease_expires_at: null })
      .where('xaman_uuid', '=', claimed.xamanUuid)
      .where('lease_expires_at', '=', claimed.leaseExpiresAtMs)
      .execute()
  },

  async markSettled(db: DbOrTx, xamanUuid: string, nowMs: number): Promise<void> {
    await db
      .updateTable('xaman_sign_requests')
      .set({ settled_at: nowMs, lease_expires_at: null })
      .where('xaman_uuid', '=', xamanUuid)
      .execute()
  },
}
