// One-time sign-in tokens for the local admin, stored by the SHA-256 of the token.
import type { DbOrTx } from '../../platform/db/database.js'

export const loginTokensRepository = {
  async insert(db: DbOrTx, token: { tokenHash: string; accountId: string; createdAtMs: number; expiresAtMs: number }): Promise<void> {
    await db
      .insertInto('login_tokens')
      .values({
        token_hash: token.tokenHash,
        account_id: token.accountId,
        created_at: token.createdAtMs,
        expires_at: token.expiresAtMs,
        used_at: null,
      })
      .execute()
  },

  /**
   * Uses the token: one conditional UPDATE, so that of two concurrent uses exactly one wins. Returns its
   * account, or undefined when the token is unknown, already used or expired.
   */
  async consume(db: DbOrTx, tokenHash: string, nowMs: number): Promise<string | undefined> {
    const row = await db
      .updateTable('login_tokens')
      .set({ used_at: nowMs })
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', nowMs)
      .returning('account_id')
      .executeTakeFirst()
    return row?.account_id
  },

  /** Housekeeping when a token is issued: forgets tokens that can no longer be used. */
  async deleteEnded(db: DbOrTx, nowMs: number): Promise<void> {
    await db
      .deleteFrom('login_tokens')
      .where((eb) => eb.or([eb('expires_at', '<=', nowMs), eb('used_at', 'is not', null)]))
      .execute()
  },
}
