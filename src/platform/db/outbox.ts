// The lease protocol shared by the outbox tables (webhook deliveries, emails, transaction follows): claiming due rows,
// handing claimed rows back, and checking a claim.
import type { ExpressionBuilder, Kysely, Selectable, SelectQueryBuilder } from 'kysely'
import type { DbOrTx, Dialect } from './database.js'
import type { Database } from './schema.js'

type OutboxTable = 'webhook_deliveries' | 'emails' | 'transaction_follows'

/** The columns the lease protocol reads and writes, which every outbox table has. */
interface OutboxColumns {
  id: string
  state: string
  attempts: number
  next_attempt_at: number
  lease_expires_at: number | null
}

/** The ids of an outbox table's due rows; a caller may narrow it further before the claim. */
type DueQuery<T extends OutboxTable> = SelectQueryBuilder<Database, T, { id: string }>

/**
 * A claimed row is identified by its id, attempt count and lease: a worker records the outcome only while all three
 * are unchanged, so a worker whose lease was taken over cannot overwrite the new owner's record.
 */
export interface OutboxClaim {
  id: string
  attempts: number
  leaseExpiresAtMs: number
}

/** A claimed row always has a lease; 0 stands in for a missing one and matches no claim. */
export const claimOf = (row: { id: string; attempts: number; leaseExpiresAtMs: number | null }): OutboxClaim => ({
  id: row.id,
  attempts: row.attempts,
  leaseExpiresAtMs: row.leaseExpiresAtMs ?? 0,
})

/**
 * Atomically moves up to `limit` due rows to 'sending' under a lease, and returns them. Due: pending with its attempt
 * time reached, or sending with an expired lease (its worker died). On PostgreSQL the rows are locked with SKIP LOCKED,
 * so concurrent workers claim disjoint sets without waiting on each other; SQLite has a single writer, so the one
 * statement is atomic by itself.
 */
export async function claimDueRows<T extends OutboxTable>(
  db: DbOrTx,
  dialect: Dialect,
  table: T,
  claim: { nowMs: number; leaseExpiresAtMs: number; limit: number },
  narrow: (due: DueQuery<T>) => DueQuery<T> = (due) => due,
): Promise<Selectable<Database[T]>[]> {
  // Kysely cannot follow column names through a generic table name, so the query is built against the shared columns.
  const outbox = db as unknown as Kysely<Record<'outbox', OutboxColumns>>
  const outboxTable = table as unknown as 'outbox'
  const due = outbox
    .selectFrom(outboxTable)
    .select('id')
    .where((eb) =>
      eb.or([
        eb.and([eb('state', '=', 'pending'), eb('next_attempt_at', '<=', claim.nowMs)]),
        eb.and([eb('state', '=', 'sending'), eb('lease_expires_at', '<=', claim.nowMs)]),
      ]),
    )
    .orderBy('next_attempt_at')
    .limit(claim.limit)
  let narrowed = narrow(due as unknown as DueQuery<T>) as unknown as typeof due
  if (dialect === 'postgres') narrowed = narrowed.forUpdate().skipLocked()
  const rows = await outbox
    .updateTable(outboxTable)
    .set({ state: 'sending', lease_expires_at: claim.leaseExpiresAtMs })
    .where('id', 'in', narrowed)
    .returningAll()
    .execute()
  return rows as unknown as Selectable<Database[T]>[]
}

/**
 * Makes rows claimed together (one lease) due again at once, unattempted, where that claim still holds: for the next
 * claim of any worker. A row another worker has taken over is left to it.
 */
export async function releaseClaimedRows(db: DbOrTx, table: OutboxTable, ids: readonly string[], leaseExpiresAtMs: number): Promise<void> {
  if (ids.length === 0) return
  const outbox = db as unknown as Kysely<Record<'outbox', OutboxColumns>>
  await outbox
    .updateTable(table as unknown as 'outbox')
    .set({ state: 'pending', lease_expires_at: null })
    .where('id', 'in', ids)
    .where('state', '=', 'sending')
    .where('lease_expires_at', '=', leaseExpiresAtMs)
    .execute()
}

/** The condition under which a claim still holds, for the WHERE of the UPDATE that records its outcome. */
export const claimHolds =
  (claim: OutboxClaim) =>
  <T extends OutboxTable>(eb: ExpressionBuilder<Database, T>) => {
    const outbox = eb as unknown as ExpressionBuilder<Record<'outbox', OutboxColumns>, 'outbox'>
    return outbox.and([
      outbox('id', '=', claim.id),
      outbox('state', '=', 'sending'),
      outbox('attempts', '=', claim.attempts),
      outbox('lease_expires_at', '=', claim.leaseExpiresAtMs),
    ])
  }
