// The Xaman sign requests created for payloads, until their outcome has been applied.
import type { DbOrTx, Dialect } from '../../../platform/db/database.js'

/** A Xaman request claimed by the worker: its lease is its own until it settles or releases it. */
export interface ClaimedXamanRequest {
  xamanUuid: string
  payloadUuid: string
  leaseExpiresAtMs: number
}

export const xamanSignRequestsRepository = {
  /** False when the Xaman uuid is taken already (Xaman gave it before): nothing is written then. */
  async insert(db: DbOrTx, request: { xamanUuid: string; payloadUuid: string; createdAtMs: number }): Promise<boolean> {
    const result = await db
      .insertInto('xaman_sign_requests')
      .values({
        xaman_uuid: request.xamanUuid,
        payload_uuid: request.payloadUuid,
        created_at: request.createdAtMs,
        settled_at: null,
        next_check_at: request.createdAtMs,
        lease_expires_at: null,
      })
      .onConflict((conflict) => conflict.column('xaman_uuid').doNothing())
      .executeTakeFirst()
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1
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
