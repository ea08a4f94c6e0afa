// Dashboard sessions, stored by the SHA-256 of their token. Revocation is a timestamp, so logout is immediate.

import type { DbOrTx } from '../../platform/db/database.js'
import { type Account, toAccount } from './repository.js'

export interface SessionRecord {
  idHash: string
  accountId: string
  createdAtMs: number
  expiresAtMs: number
}

export const sessionsRepository = {
  async insert(db: DbOrTx, session: SessionRecord): Promise<void> {
    await db
      .insertInto('sessions')
      .values({
        id_hash: session.idHash,
        account_id: session.accountId,
        created_at: session.createdAtMs,
        expires_at: session.expiresAtMs,
        revoked_at: null,
      })
      .execute()
  },

  /** The session and its account, when it is neither revoked nor expired at `nowMs`. */
  async findActive(db: DbOrTx, idHash: string, nowMs: number): Promise<(SessionRecord & { account: Account }) | undefined> {
    const row = await db
      .selectFrom('sessions')
      .innerJoin('accounts', 'accounts.id', 'sessions.account_id')
      .select([
        'sessions.id_hash',
        'sessions.created_at as session_created_at',
        'sessions.expires_at',
        'accounts.id',
        'accounts.issuer',
        'accounts.subject',
        'accounts.email',
        'accounts.name',
        'accounts.created_at',
      ])
      .where('sessions.id_hash', '=', idHash)
      .where('sessions.revoked_at', 'is', null)
      .where('sessions.expires_at', '>', nowMs)
      .executeTakeFirst()
    if (!row) return undefined
    return {
      idHash: row.id_hash,
      accountId: row.id,
      createdAtMs: row.session_created_at,
      expiresAtMs: row.expires_at,
      account: toAccount(row),
    }
  },

  async extend(db: DbOrTx, idHash: string, expiresAtMs: number): Promise<void> {
    await db
      .updateTable('sessions')
      .set({ expires_at: expiresAtMs })
      .where('id_hash', '=', idHash)
      .where('revoked_at', 'is', null)
      .where('expires_at', '<', expiresAtMs)
      .execute()
  },

  async revoke(db: DbOrTx, idHash: string, nowMs: number): Promise<void> {
    await db.updateTable('sessions').set({ revoked_at: nowMs }).where('id_hash', '=', idHash).where('revoked_at', 'is', null).execute()
  },

  /** Housekeeping at sign-in: forgets the account's sessions that can no longer be used. */
  async deleteEnded(db: DbOrTx, accountId: string, nowMs: number): Promise<void> {
    await db
      .deleteFrom('sessions')
      .where('account_id', '=', accountId)
      .where((eb) => eb.or([eb('expires_at', '<=', nowMs), eb('revoked_at', 'is not', null)]))
      .execute()
  },
}
