// The one way a change under a cap takes its turn: the check (a count) and the write that must not pass the cap run in
// one transaction, after the row the cap belongs to is locked.
import { sql } from 'kysely'
import type { DbOrTx, Dialect } from './database.js'

/** The rows a cap belongs to, each by its key column. */
const KEY_COLUMNS = { accounts: 'id', projects: 'id', payloads: 'uuid' } as const

/**
 * Locks the row until the transaction ends, on PostgreSQL, so that concurrent changes under its cap (an account's
 * projects, a project's keys and webhooks, a payload's Xaman requests) take turns and cannot pass the cap together.
 * SQLite has one writer already.
 */
export async function lockRow(tx: DbOrTx, dialect: Dialect, table: keyof typeof KEY_COLUMNS, key: string): Promise<void> {
  if (dialect !== 'postgres') return
  await sql`select 1 from ${sql.table(table)} where ${sql.ref(KEY_COLUMNS[table])} = ${key} for update`.execute(tx)
}
