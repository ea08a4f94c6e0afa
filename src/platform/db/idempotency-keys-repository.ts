// Idempotency-Key rows. A key is claimed by one INSERT, which the primary key (project, key) lets only one request
// win, on SQLite and on PostgreSQL, whichever instance it runs on; the winner completes it in its own transaction.
import type { Selectable } from 'kysely'
import type { DbOrTx } from './database.js'
import type { IdempotencyKeysTable } from './schema.js'

export type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>

export interface IdempotencyClaim {
  projectId: string
  key: string
  fingerprint: string
  /** Random, per request: only the claim's holder may complete or release it. */
  claimToken: string
  nowMs: number
  leaseMs: number
  keepMs: number
}

export const idempotencyKeysRepository = {
  /**
   * Claims the key for a request: true when this request now holds it, else the row that holds it. A key whose
   * 24 hours have passed, or whose holder's lease ran out before it completed (its instance died), is taken over.
   */
  async claim(db: DbOrTx, claim: IdempotencyClaim): Promise<true | IdempotencyKeyRow> {
    const fresh = {
      fingerprint: claim.fingerprint,
      claim_token: claim.claimToken,
      lease_expires_at: claim.nowMs + claim.leaseMs,
      status_code: null,
      response_sealed: null,
      created_at: claim.nowMs,
      expires_at: claim.nowMs + claim.keepMs,
    }
    const inserted = await db
      .insertInto('idempotency_keys')
      .values({ project_id: claim.projectId, key: claim.key, ...fresh })
      .onConflict((oc) => oc.columns(['project_id', 'key']).doNothing())
      .returning('key')
      .executeTakeFirst()
    if (inserted) return true
    const takenOver = await db
      .updateTable('idempotency_keys')
      .set(fresh)
      .where('project_id', '=', claim.projectId)
      .where('key', '=', claim.key)
      .where((eb) => eb.or([eb('expires_at', '<=', claim.nowMs), eb('lease_expires_at', '<=', claim.nowMs)]))
      .returning('key')
      .executeTakeFirst()
    if (takenOver) return true
    const holder = await db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('project_id', '=', claim.projectId)
      .where('key', '=', claim.key)
      .executeTakeFirst()
    // Released between the insert and this read: the caller may simply try again.
    return holder ?? idempotencyKeysRepository.claim(db, claim)
  },

  /** Records the response of the request that holds the claim; false when it no longer holds it. */
  async complete(
    db: DbOrTx,
    done: { projectId: string; key: string; claimToken: string; statusCode: number; responseSealed: string },
  ): Promise<boolean> {
    const row = await db
      .updateTable('idempotency_keys')
      .set({ status_code: done.statusCode, response_sealed: done.responseSealed, lease_expires_at: null })
      .where('project_id', '=', done.projectId)
      .where('key', '=', done.key)
      .where('claim_token', '=', done.claimToken)
      .where('response_sealed', 'is', null)
      .returning('key')
      .executeTakeFirst()
    return row !== undefined
  },

  /** Lets go of a claim whose request ended without a response to keep (it failed), so that a retry can run. */
  async release(db: DbOrTx, claim: { projectId: string; key: string; claimToken: string }): Promise<void> {
    await db
      .deleteFrom('idempotency_keys')
      .where('project_id', '=', claim.projectId)
      .where('key', '=', claim.key)
      .where('claim_token', '=', claim.claimToken)
      .where('response_sealed', 'is', null)
      .execute()
  },

  /** Deletes the keys past their 24 hours; returns how many. Run every minute, each run has at most a minute's keys. */
  async deleteExpired(db: DbOrTx, nowMs: number): Promise<number> {
    const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', nowMs).executeTakeFirst()
    return Number(result.numDeletedRows)
  },
}
