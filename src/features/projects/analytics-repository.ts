// Reads the daily rollup (payload_daily_counts) that PayloadService keeps in step with every creation and
// transition; its primary key (project, day, ...) makes a period one index range, whatever the payload count. Each key
// is kept in up to COUNTER_SHARDS rows (usage-repository.ts), summed here.
import type { DbOrTx } from '../../platform/db/database.js'
import type { DailyCount } from './analytics.js'

export const analyticsRepository = {
  /** Rollup rows of the project for the UTC days from `firstDay` to `lastDay`, inclusive (YYYY-MM-DD). */
  async dailyCounts(db: DbOrTx, projectId: string, firstDay: string, lastDay: string): Promise<DailyCount[]> {
    const rows = await db
      .selectFrom('payload_daily_counts')
      .select((eb) => ['day', 'status', 'wallet_adapter', eb.fn.sum<number>('count').as('count')])
      .where('project_id', '=', projectId)
      .where('day', '>=', firstDay)
      .where('day', '<=', lastDay)
      .groupBy(['day', 'status', 'wallet_adapter'])
      .execute()
    return rows.map((row) => ({ day: row.day, status: row.status, walletAdapter: row.wallet_adapter, count: Number(row.count) }))
  },
}
