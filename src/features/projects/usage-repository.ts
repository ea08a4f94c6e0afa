// Monthly payload usage per project, the 80% warning record, and the daily counts behind analytics.
//
// Both kinds of counter are spread over shards so that concurrent creations and transitions of one project do not
// queue on one row (on PostgreSQL a row updated in a transaction stays locked until its commit, so one counter row
// per project lets through one creation per commit). SQLite has one writer and uses shard 0 alone.
// - The month's quota: project_usage.payload_count is the part of the plan's limit granted to the shards so far, in
//   blocks; a shard counts its payloads in `used` and may not pass its `granted`. The sum of the grants never passes
//   the limit, so neither do the payloads. A shard out of quota takes the next block, and once the month's quota is
//   all granted it takes what other shards have left over, so that the last payloads of the month are refused only
//   when every shard is full.
//   Every shard row also holds the month's grants in all (`month_granted`), rewritten on every shard with each grant:
//   as no count passes the grants, a creation that sees them below a threshold (the usage warning's) knows the month's
//   count is below it too, without reading it (Reservation, monthGrants).
// - The daily counts: each transaction adds to its shard's row; analytics sums the shards.
import { sql } from 'kysely'
import type { DbOrTx, Dialect, Tx } from '../../platform/db/database.js'
import { HotQuery } from '../../platform/db/hot-query.js'

/** Counter shards per project on PostgreSQL: more than the transactions one project has in flight, few to sum. */
export const COUNTER_SHARDS = 16
/** The largest block of quota a shard takes at once. */
const MAX_BLOCK = 1000

/** A shard for the next transaction's counters: any on PostgreSQL, where each spreads the load; 0 on SQLite. */
export function pickShard(dialect: Dialect): number {
  return dialect === 'sqlite' ? 0 : Math.floor(Math.random() * COUNTER_SHARDS)
}

// The common case, one statement: the shard has quota left for all `count`, and the month's grants are within the
// limit (a lower limit since they were made, after a change of plan, sends every creation to the exact count below).
const useFromShard = new HotQuery((db, p: { projectId: string; month: string; shard: number; count: number; limit: number }) =>
  db
    .updateTable('usage_shards')
    .set((eb) => ({ used: eb('used', '+', p.count) }))
    .where('project_id', '=', p.projectId)
    .where('month', '=', p.month)
    .where('shard', '=', p.shard)
    .where((eb) => eb(eb('used', '+', p.count), '<=', eb.ref('granted')))
    .where((eb) =>
      eb(
        eb
          .selectFrom('project_usage')
          .select('project_usage.payload_count')
          .where('project_usage.project_id', '=', p.projectId)
          .where('project_usage.month', '=', p.month),
        '<=',
        p.limit,
      ),
    )
    .returning(['used', monthGrants(p.projectId, p.month).as('month_granted')]),
)

/**
 * The month's grants as a count that updates a shard's row sees them (Reservation): the row's `month_granted`, or the
 * month's row as the statement's snapshot has it, whichever is more. The row's holds a grant committed while the count
 * waited for the row; the month's row, every grant committed before the statement, those of an instance of a version
 * before `month_granted` included (during a rolling deploy), which did not write it on the shards.
 */
export function monthGrants(projectId: string, month: string) {
  const monthRow = sql`coalesce((select payload_count from project_usage where project_id = ${projectId} and month = ${month}), 0)`
  // The greater of the two, written so on both databases (PostgreSQL's greatest() is not SQLite's).
  return sql<number>`case when month_granted > ${monthRow} then month_granted else ${monthRow} end`
}

const addToDailyCount = new HotQuery(
  (db, p: { projectId: string; day: string; status: string; walletAdapter: string; delta: number; shard: number }) =>
    db
      .insertInto('payload_daily_counts')
      .values({ project_id: p.projectId, day: p.day, status: p.status, wallet_adapter: p.walletAdapter, count: p.delta, shard: p.shard })
      .onConflict((oc) =>
        oc.columns(['project_id', 'day', 'status', 'wallet_adapter', 'shard']).doUpdateSet((eb) => ({
          count: eb('payload_daily_counts.count', '+', eb.ref('excluded.count')),
        })),
      ),
)

// Transitions' two changes in one statement: `moved` payloads from pending (`unmoved` is -moved: a hot query's
// parameters are placeholders, so the negation is a parameter of its own), to one status (two rows, locked in one
// order: the pending row's conflict target sorts first in every transition).
const moveInDailyCounts = new HotQuery(
  (db, p: { projectId: string; day: string; status: string; walletAdapter: string; shard: number; moved: number; unmoved: number }) =>
    db
      .insertInto('payload_daily_counts')
      .values([
        { project_id: p.projectId, day: p.day, status: 'pending', wallet_adapter: '', count: p.unmoved, shard: p.shard },
        { project_id: p.projectId, day: p.day, status: p.status, wallet_adapter: p.walletAdapter, count: p.moved, shard: p.shard },
      ])
      .onConflict((oc) =>
        oc.columns(['project_id', 'day', 'status', 'wallet_adapter', 'shard']).doUpdateSet((eb) => ({
          count: eb('payload_daily_counts.count', '+', eb.ref('excluded.count')),
        })),
      ),
)

const monthlyUsed = new HotQuery((db, p: { projectId: string; month: string }) =>
  db
    .selectFrom('usage_shards')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('used'), sql<number>`0`).as('used'))
    .where('project_id', '=', p.projectId)
    .where('month', '=', p.month),
)

/**
 * A grant's new total, on every shard's row of the month (whose locks the grant holds): a creation counted after it on
 * any shard reads it there (Reservation).
 */
async function setMonthGranted(tx: Tx, projectId: string, month: string, monthGranted: number): Promise<void> {
  await tx
    .updateTable('usage_shards')
    .set({ month_granted: monthGranted })
    .where('project_id', '=', projectId)
    .where('month', '=', month)
    .execute()
}

/** A shard's block: a share of what is left of the month, so that the shards do not take it all early. */
function blockSize(left: number, needed: number): number {
  return Math.min(left, Math.max(needed, Math.min(MAX_BLOCK, Math.floor(left / (4 * COUNTER_SHARDS)))))
}

/**
 * What reserveMonthlyPayloads counted: how many payloads fit (0 to the count asked), and the month's grants as they
 * stand at the transaction's commit, which the month's count never passes (0 when none fit).
 */
export interface Reservation {
  fit: number
  monthGranted: number
}

export const usageRepository = {
  /**
   * Counts up to `count` more payloads of the month in `shard`, within the limit.
   * Exact under concurrency on several instances: every count stays within its shard's grant, and the grants within
   * the limit. Runs in the transaction that creates the payloads, so that the count commits or rolls back with them.
   * A transaction reserving for several projects must do so in one order of projects (rows are locked as they go).
   *
   * `monthGranted` is read as the count updates the shard's row (monthGrants). It is the month's grants at the commit:
   * a grant committed before the statement is in the month's row; one committed while the count waited for the
   * shard's row rewrote that row, which the update then reads again at its latest version (PostgreSQL); and a grant
   * after it must wait for this commit (it locks every shard's row first).
   */
  async reserveMonthlyPayloads(
    tx: Tx,
    dialect: Dialect,
    quota: { projectId: string; month: string; limit: number },
    count: number,
    shard: number,
  ): Promise<Reservation> {
    if (count <= 0 || quota.limit <= 0) return { fit: 0, monthGranted: 0 }
    const { projectId, month, limit } = quota
    const counted = await useFromShard.executeTakeFirst(tx, { projectId, month, shard, count, limit })
    if (counted) return { fit: count, monthGranted: Number(counted.month_granted) }
    // Out of quota in this shard: take a block from the month, under the month's row lock (every grant and every
    // move between shards of this month waits for it, so they run one at a time and see each other's counts).
    // SQLite has one writer and no row locks (nor FOR UPDATE).
    const lock = dialect === 'postgres'
    await tx
      .insertInto('project_usage')
      .values({ project_id: projectId, month, payload_count: 0 })
      .onConflict((oc) => oc.doNothing())
      .execute()
    let monthRow = tx.selectFrom('project_usage').select('payload_count').where('project_id', '=', projectId).where('month', '=', month)
    if (lock) monthRow = monthRow.forUpdate()
    const granted = Number((await monthRow.executeTakeFirstOrThrow()).payload_count)
    await tx
      .insertInto('usage_shards')
      .values({ project_id: projectId, month, shard, granted: 0, used: 0, month_granted: granted })
      .onConflict((oc) => oc.doNothing())
      .execute()
    let shards = tx
      .selectFrom('usage_shards')
      .select(['shard', 'granted', 'used'])
      .where('project_id', '=', projectId)
      .where('month', '=', month)
      .orderBy('shard')
    if (lock) shards = shards.forUpdate()
    const rows = (await shards.execute()).map((row) => ({
      shard: row.shard,
      used: Number(row.used),
      free: Number(row.granted) - Number(row.used),
    }))
    const own = rows.find((row) => row.shard === shard)?.free ?? 0
    if (granted > limit) {
      // The limit is lower than the quota granted this month (the plan changed): count against the payloads themselves,
      // one creation at a time under the month's lock, and grant nothing more.
      const used = rows.reduce((sum, row) => sum + row.used, 0)
      const taken = Math.min(count, Math.max(0, limit - used))
      const extra = Math.max(0, taken - own)
      if (taken > 0) {
        await tx
          .updateTable('project_usage')
          .set((eb) => ({ payload_count: eb('payload_count', '+', extra) }))
          .where('project_id', '=', projectId)
          .where('month', '=', month)
          .execute()
        await tx
          .updateTable('usage_shards')
          .set((eb) => ({ granted: eb('granted', '+', extra), used: eb('used', '+', taken) }))
          .where('project_id', '=', projectId)
          .where('month', '=', month)
          .where('shard', '=', shard)
          .execute()
        if (extra > 0) await setMonthGranted(tx, projectId, month, granted + extra)
      }
      return { fit: taken, monthGranted: taken > 0 ? granted + extra : 0 }
    }
    const block = blockSize(Math.max(0, limit - granted), count - own)
    let available = own + block
    // The month is all granted: take what the other shards have left (a shard of an idle instance, say).
    for (const other of rows) {
      if (available >= count) break
      if (other.shard === shard || other.free <= 0) continue
      const moved = Math.min(other.free, count - available)
      await tx
        .updateTable('usage_shards')
        .set((eb) => ({ granted: eb('granted', '-', moved) }))
        .where('project_id', '=', projectId)
        .where('month', '=', month)
        .where('shard', '=', other.shard)
        .execute()
      available += moved
    }
    const taken = Math.min(count, available)
    if (block > 0) {
      await tx
        .updateTable('project_usage')
        .set((eb) => ({ payload_count: eb('payload_count', '+', block) }))
        .where('project_id', '=', projectId)
        .where('month', '=', month)
        .execute()
    }
    await tx
      .updateTable('usage_shards')
      .set((eb) => ({ granted: eb('granted', '+', available - own), used: eb('used', '+', taken) }))
      .where('project_id', '=', projectId)
      .where('month', '=', month)
      .where('shard', '=', shard)
      .execute()
    if (block > 0) await setMonthGranted(tx, projectId, month, granted + block)
    return { fit: taken, monthGranted: taken > 0 ? granted + block : 0 }
  },

  /** Payloads of the project created in `month` (YYYY-MM), counted over its shards. */
  async monthlyCount(db: DbOrTx, projectId: string, month: string): Promise<number> {
    const row = await monthlyUsed.executeTakeFirst(db, { projectId, month })
    return Number(row?.used ?? 0)
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

  /**
   * Adds `delta` to the count of payloads created on `day` that are now in `status` (with `walletAdapter`), in
   * `shard` (pickShard; one per transaction).
   */
  async addDailyCount(
    db: DbOrTx,
    key: { projectId: string; day: string; status: string; walletAdapter: string },
    delta: number,
    shard: number,
  ): Promise<void> {
    await addToDailyCount.execute(db, { ...key, delta, shard })
  },

  /**
   * Moves `count` payloads of `key.day` from pending to `key.status` in the daily counts, in one statement. Transitions
   * run it last, just before their commit: the two counter rows stay locked until the commit, and transitions of a
   * project that drew the same shard wait for each other for that long.
   */
  async moveFromPending(
    tx: Tx,
    key: { projectId: string; day: string; status: string; walletAdapter: string },
    count: number,
    shard: number,
  ): Promise<void> {
    await moveInDailyCounts.execute(tx, { ...key, shard, moved: count, unmoved: -count })
  },
}
