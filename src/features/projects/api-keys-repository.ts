// API keys, stored by hash. The full key never reaches the database.
import type { Selectable } from 'kysely'
import type { DbOrTx } from '../../platform/db/database.js'
import type { ApiKeysTable } from '../../platform/db/schema.js'
import type { PlanName } from './plans.js'

export interface ApiKeyRecord {
  id: string
  projectId: string
  name: string
  prefix: string
  createdAtMs: number
  lastUsedAtMs: number | null
  revokedAtMs: number | null
}

/** What authenticating a request with a key needs: the key, its project and the project's plan. */
export interface ApiKeyPrincipal {
  keyId: string
  keyHash: string
  projectId: string
  projectName: string
  plan: PlanName
  revoked: boolean
}

const toRecord = (row: Selectable<ApiKeysTable>): ApiKeyRecord => ({
  id: row.id,
  projectId: row.project_id,
  name: row.name,
  prefix: row.prefix,
  createdAtMs: row.created_at,
  lastUsedAtMs: row.last_used_at,
  revokedAtMs: row.revoked_at,
})

export const apiKeysRepository = {
  async insert(db: DbOrTx, key: ApiKeyRecord & { keyHash: string }): Promise<void> {
    await db
      .insertInto('api_keys')
      .values({
        id: key.id,
        project_id: key.projectId,
        name: key.name,
        prefix: key.prefix,
        key_hash: key.keyHash,
        created_at: key.createdAtMs,
        last_used_at: key.lastUsedAtMs,
        revoked_at: key.revokedAtMs,
      })
      .execute()
  },

  async findPrincipalByHash(db: DbOrTx, keyHash: string): Promise<ApiKeyPrincipal | undefined> {
    const row = await db
      .selectFrom('api_keys')
      .innerJoin('projects', 'projects.id', 'api_keys.project_id')
      .select(['api_keys.id', 'api_keys.key_hash', 'api_keys.revoked_at', 'projects.id as project_id', 'projects.name', 'projects.plan'])
      .where('api_keys.key_hash', '=', keyHash)
      .executeTakeFirst()
    if (!row) return undefined
    return {
      keyId: row.id,
      keyHash: row.key_hash,
      projectId: row.project_id,
      projectName: row.name,
      plan: row.plan as PlanName,
      revoked: row.revoked_at !== null,
    }
  },

  async listForProject(db: DbOrTx, projectId: string): Promise<ApiKeyRecord[]> {
    const rows = await db.selectFrom('api_keys').selectAll().where('project_id', '=', projectId).orderBy('created_at', 'asc').execute()
    return rows.map(toRecord)
  },

  async countActiveForProject(db: DbOrTx, projectId: string): Promise<number> {
    const row = await db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('project_id', '=', projectId)
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow()
    return Number(row.count)
  },

  async findForProject(db: DbOrTx, projectId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
    const row = await db.selectFrom('api_keys').selectAll().where('project_id', '=', projectId).where('id', '=', keyId).executeTakeFirst()
    return row && toRecord(row)
  },

  /** Revokes a key once (a second revocation keeps the first time); the key's hash when this call revoked it. */
  async revoke(db: DbOrTx, projectId: string, keyId: string, nowMs: number): Promise<string | undefined> {
    const row = await db
      .updateTable('api_keys')
      .set({ revoked_at: nowMs })
      .where('project_id', '=', projectId)
      .where('id', '=', keyId)
      .where('revoked_at', 'is', null)
      .returning('key_hash')
      .executeTakeFirst()
    return row?.key_hash
  },

  /**
   * Deletes the project's revoked keys but the `keep` revoked last, so that revoking keys in a loop grows nothing;
   * never `justRevoked` (another instance's clock ahead of this one's could rank it older than keys revoked since).
   */
  async pruneRevoked(db: DbOrTx, projectId: string, justRevoked: string, keep: number): Promise<void> {
    await db
      .deleteFrom('api_keys')
      .where('project_id', '=', projectId)
      .where('id', '!=', justRevoked)
      .where('revoked_at', 'is not', null)
      .where(
        'id',
        'not in',
        db
          .selectFrom('api_keys')
          .select('id')
          .where('project_id', '=', projectId)
          .where('revoked_at', 'is not', null)
          .orderBy('revoked_at', 'desc')
          .orderBy('id', 'desc')
          .limit(keep),
      )
      .execute()
  },

  async touchLastUsed(db: DbOrTx, keyId: string, nowMs: number): Promise<void> {
    await db.updateTable('api_keys').set({ last_used_at: nowMs }).where('id', '=', keyId).execute()
  },
}
