// Small pieces of server state kept in the database, such as the generated server secret.
import { randomBytes } from 'node:crypto'
import type { DbOrTx } from './database.js'

export const settingsRepository = {
  async get(db: DbOrTx, key: string): Promise<string | undefined> {
    return (await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst())?.value
  },

  async remove(db: DbOrTx, key: string): Promise<void> {
    await db.deleteFrom('settings').where('key', '=', key).execute()
  },

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

/** Where the embedded quick start keeps the server secret it generated; `countersign rotate-secret` removes it. */
export const GENERATED_SECRET_KEY = 'server_secret'

/** SESSION_SECRET when set; otherwise a random secret generated on first start and kept in the database. */
export async function loadServerSecret(db: DbOrTx, configured: string | undefined): Promise<string> {
  return configured ?? settingsRepository.getOrCreate(db, GENERATED_SECRET_KEY, () => randomBytes(32).toString('base64url'))
}
