// Monthly payload usage per project, the 80% warning record, and the daily counts behind analytics.
import type { DbOrTx } from '../../platform/db/database.js'
import { HotQuery } from '../../platform/db/hot-query.js'

// One statement: the first payload of the month inserts the row; later ones increment it only while under the
// limit (the conflict update's WHERE), so a full month returns no row.
const reserveMonthly = new HotQuery((db, p: { projectId: string; month: string; limit: number }) =>
  db
    .insertInto('project_usage')
    .values({ project_id: p.projectId, month: p.month, payload_count: 1 })
    .onConflict((oc) =>
      oc
        .columns(['project_id', 'month'])
        .doUpdateSet((eb) => ({ payload_count: eb('project_usage.payload_count', '+', 1) }))
        .where('project_usage.payload_count', '<', p.limit),
    )
    .returning('payload_count'),
)

const addToDailyCount = new HotQuery((db, p: { projectId: string; day: string; status: string; walletAdapter: string; delta: number }) =>
  db
    .insertInto('payload_daily_counts')
    .values({ project_id: p.projectId, day: p.day, status: p.status, wallet_adapter: p.walletAdapter, count: p.delta })
    .onConflict((oc) =>
      oc.columns(['project_id', 'day', 'status', 'wallet_adapter']).doUpdateSet((eb) => ({
        count: eb('payload_daily_counts.count', '+', eb.ref('excluded.count')),
      })),
    ),
)

export const usageRepository = {
  /**
   * Counts one more payload for the month if the project is under its limit, atomically: of many
   * concurrent creations at the limit, exactly the ones that fit succeed. Returns the new count, or
   * undefined when the limit is reached.
   */
  async reserveMonthlyPayload(db: DbOrTx, projectId: string, month: string, limit: number): Promise<number | undefined> {
    if (limit <= 0) return undefined
    const row = await reserveMonthly.executeTakeFirst(db, { projectId, month, limit })
    return row?.payload_count
  },

  async monthlyCount(db: DbOrTx, projectId: string, month: string): Promise<number> {
    const row = await db
      .selectFrom('project_usage')
      .select('payload_count')
      .where('project_id', '=', projectId)
      .where('month', '=', month)
      .executeTakeFirst()
    return row?.payload_count ?? 0
  },

  /** Records the month's usage warning once; returns true only for the call that recorded it. */
  async recordUsageWarning(
    db: DbOrTx,
    warning: { projectId: string; month: string; limit: number; payloadCount: number; nowMs: number },
  ): Promise<boolean> {
    const result = await db
      .insertInto('usage_warnings')
      .values({
        project_id: warning.projectId,
        month: warning.month,
        limit_value: warning.limit,
        payload_count: warning.payloadCount,
        created_at: warning.nowMs,
      })
      .onConflict((oc) => oc.columns(['project_id', 'month']).doNothing())
      .executeTakeFirst()
    return (result.numInsertedOrUpdatedRows ?? 0n) > 0n
  },

  /** Adds `delta` to the count of payloads created on `day` that are now in `status` (with `walletAdapter`). */
  async addDailyCount(db: DbOrTx, key: { projectId: string; day: string; status: string; walletAdapter: string }, delta: number) {
    await addToDailyCount.execute(db, { ...key, delta })
  },
}
