// Small pieces of server state kept in the database, such as the generated server secret.
import { randomBytes } from 'node:crypto'
import type { DbOrTx } from './database.js'

export const settingsRepository = {
  /** The value under `key`, created with `create()` on first use; concurrent first uses agree on one value. */
  async getOrCreate(db: DbOrTx, key: string, create: () => string): Promise<string> {
    const existing = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst()
    if (existing) return existing.value
    await db
      .insertInto('settings')
      .values({ key, value: create() })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute()
    const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirstOrThrow()
    return row.value
  },
}

/** SESSION_SECRET when set; otherwise a random secret generated on first start and kept in the database. */
export async function loadServerSecret(db: DbOrTx, configured: string | undefined): Promise<string> {
  return configured ?? settingsRepository.getOrCreate(db, 'server_secret', () => randomBytes(32).toString('base64url'))
}
