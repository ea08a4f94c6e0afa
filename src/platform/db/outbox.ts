// The lease protocol shared by the outbox tables (webhook deliveries, emails, transaction follows): claiming due rows,
// handing claimed rows back, and checking a claim.
import { type ExpressionBuilder, type Kysely, type Selectable, sql } from 'kysely'
import type { DbOrTx, Dialect } from './database.js'
import { HotQuery } from './hot-query.js'
import { COLUMNS, type Database } from './schema.js'

type OutboxTable = 'webhook_deliveries' | 'emails' | 'transaction_follows'

/** The columns the lease protocol reads and writes, which every outbox table has. */
interface OutboxColumns {
  id: string
  state: string
  attempts: number
  next_attempt_at: number
  lease_expires_at: number | null
}

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
 * Atomically moves up to `limit` due rows to 'sending' under a lease, and returns them, except rows whose
 * `except.column` is one of `except.ids`. Due: pending with its attempt time reached, or sending with an expired lease
 * (its worker died). On PostgreSQL the rows are locked with SKIP LOCKED, so concurrent workers claim disjoint sets
 * without waiting on each other, and the statement is a hot query (hot-query.ts): one text a table, whatever is
 * excepted, prepared once a connection instead of parsed and planned at every claim (docs/performance.md, "seventh
 * session"). SQLite has a single writer, so the one statement is atomic by itself.
 */
export async function claimDueRows<T extends OutboxTable>(
  db: DbOrTx,
  dialect: Dialect,
  table: T,
  claim: { nowMs: number; leaseExpiresAtMs: number; limit: number; except?: Except<T> },
): Promise<Selectable<Database[T]>[]> {
  if (dialect === 'postgres') {
    const { except, ...values } = claim
    const rows = await claimDueStatement(table, except?.column).execute(db, { ...values, exceptIds: except?.ids ?? [] })
    return rows as Selectable<Database[T]>[]
  }
  // Kysely cannot follow column names through a generic table name, so the query is built against the shared columns.
  const outbox = db as unknown as Kysely<Record<'outbox', OutboxColumns>>
  const outboxTable = table as unknown as 'outbox'
  let due = outbox
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
  if (claim.except && claim.except.ids.length > 0) due = due.where(sql.ref<string>(claim.except.column), 'not in', claim.except.ids)
  const rows = await outbox
    .updateTable(outboxTable)
    .set({ state: 'sending', lease_expires_at: claim.leaseExpiresAtMs })
    .where('id', 'in', due)
    .returningAll()
    .execute()
  return rows as unknown as Selectable<Database[T]>[]
}

/** Rows a claim leaves out: those whose `column` (text) is one of `ids`. */
interface Except<T extends OutboxTable> {
  column: keyof Database[T] & string
  ids: readonly string[]
}

type ClaimParams = { nowMs: number; leaseExpiresAtMs: number; limit: number; exceptIds: readonly string[] }

/** claimDueRows's statement on PostgreSQL, one a table and excepted column. The states are literals, for the plan. */
const claimDueStatements = new Map<string, HotQuery<ClaimParams, unknown>>()

function claimDueStatement(table: OutboxTable, exceptColumn: string | undefined): HotQuery<ClaimParams, unknown> {
  const id = `${table}:${exceptColumn ?? ''}`
  let statement = claimDueStatements.get(id)
  if (!statement) {
    statement = new HotQuery(
      (_db, p: ClaimParams) => sql`update ${sql.table(table)} set state = 'sending', lease_expires_at = ${p.leaseExpiresAtMs}
        where id in (
          select id from ${sql.table(table)}
          where ((state = 'pending' and next_attempt_at <= ${p.nowMs}) or (state = 'sending' and lease_expires_at <= ${p.nowMs}))
            ${exceptColumn === undefined ? sql`` : sql`and not (${sql.ref(exceptColumn)} = any(${p.exceptIds}::text[]))`}
          order by next_attempt_at
          limit ${p.limit}
          for update skip locked
        )
        returning ${sql.join(COLUMNS[table].map((column) => sql.ref(column)))}`,
    )
    claimDueStatements.set(id, statement)
  }
  return statement
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
