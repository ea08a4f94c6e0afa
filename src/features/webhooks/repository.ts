// Webhook rows. Deleting is soft (deleted_at), so that a webhook's deliveries keep their history.
import { type Expression, type Kysely, type Selectable, type SqlBool, sql } from 'kysely'
import type { DbOrTx, Dialect } from '../../platform/db/database.js'
import { HotQuery } from '../../platform/db/hot-query.js'
import type { Database, WebhooksTable } from '../../platform/db/schema.js'
import type { PayloadEvent } from '../payloads/model.js'
import type { PlanName } from '../projects/plans.js'
import type { Webhook } from './model.js'

// Read in every transaction that resolves a payload.
const toWebhook = (row: Selectable<WebhooksTable>): Webhook => ({
  id: row.id,
  projectId: row.project_id,
  url: row.url,
  events: JSON.parse(row.events_json) as PayloadEvent[],
  createdAtMs: row.created_at,
  disabledAtMs: row.disabled_at,
  disabledReason: row.disabled_reason,
})

/** What a dispatcher needs to send to a webhook, and to decide whether it still may. */
export interface DeliveryTarget {
  webhookId: string
  projectId: string
  projectName: string
  plan: PlanName
  url: string
  secretCiphertext: string
  /** The secret a rotation replaced, and until when it still signs (beside the current one). */
  previousSecretCiphertext: string | null
  previousSecretExpiresAtMs: number | null
  /** When its current run of failures began; null while its deliveries succeed. */
  failingSinceMs: number | null
  disabled: boolean
  deleted: boolean
}

/** The webhooks' targets that `ids` selects, with their projects' name and plan (findTargets). */
const targetsWhere = (db: Kysely<Database>, ids: Expression<SqlBool>) =>
  db
    .selectFrom('webhooks')
    .innerJoin('projects', 'projects.id', 'webhooks.project_id')
    .select([
      'webhooks.id',
      'webhooks.project_id',
      'webhooks.url',
      'webhooks.secret_ciphertext',
      'webhooks.previous_secret_ciphertext',
      'webhooks.previous_secret_expires_at',
      'webhooks.failing_since',
      'webhooks.disabled_at',
      'webhooks.deleted_at',
      'projects.name',
      'projects.plan',
    ])
    .where(ids)

/** On PostgreSQL the ids go in as one array, so that one text serves any number of them (hot-query.ts). */
const findTargetsAll = new HotQuery((db, p: { ids: readonly string[] }) =>
  targetsWhere(db, sql<SqlBool>`webhooks.id = any(${p.ids}::text[])`),
)

export const webhooksRepository = {
  async insert(db: DbOrTx, webhook: Webhook, secretCiphertext: string): Promise<void> {
    await db
      .insertInto('webhooks')
      .values({
        id: webhook.id,
        project_id: webhook.projectId,
        url: webhook.url,
        secret_ciphertext: secretCiphertext,
        events_json: JSON.stringify(webhook.events),
        created_at: webhook.createdAtMs,
        disabled_at: webhook.disabledAtMs,
        disabled_reason: webhook.disabledReason,
        deleted_at: null,
        previous_secret_ciphertext: null,
        previous_secret_expires_at: null,
        failing_since: null,
      })
      .execute()
  },

  async countForProject(db: DbOrTx, projectId: string): Promise<number> {
    const row = await db
      .selectFrom('webhooks')
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('project_id', '=', projectId)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow()
    return Number(row.count)
  },

  /** The project's webhooks that are not deleted, oldest first. */
  async listForProject(db: DbOrTx, projectId: string): Promise<Webhook[]> {
    const rows = await db
      .selectFrom('webhooks')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('deleted_at', 'is', null)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute()
    return rows.map(toWebhook)
  },

  async findForProject(db: DbOrTx, projectId: string, id: string): Promise<Webhook | undefined> {
    const row = await db
      .selectFrom('webhooks')
      .selectAll()
      .where('id', '=', id)
      .where('project_id', '=', projectId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst()
    return row && toWebhook(row)
  },

  /** Returns false when the project has no such webhook (or it is already deleted). */
  async markDeleted(db: DbOrTx, projectId: string, id: string, nowMs: number): Promise<boolean> {
    const result = await db
      .updateTable('webhooks')
      .set({ deleted_at: nowMs })
      .where('id', '=', id)
      .where('project_id', '=', projectId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  },

  /** Every webhook's sealed secrets (the current one and the one a rotation replaced), deleted ones too, for re-sealing. */
  async listSealedSecrets(db: DbOrTx): Promise<Array<{ id: string; secretCiphertext: string; previousSecretCiphertext: string | null }>> {
    const rows = await db.selectFrom('webhooks').select(['id', 'secret_ciphertext', 'previous_secret_ciphertext']).orderBy('id').execute()
    return rows.map((row) => ({
      id: row.id,
      secretCiphertext: row.secret_ciphertext,
      previousSecretCiphertext: row.previous_secret_ciphertext,
    }))
  },

  async replaceSealedSecrets(
    db: DbOrTx,
    id: string,
    sealed: { secretCiphertext: string; previousSecretCiphertext: string | null },
  ): Promise<void> {
    await db
      .updateTable('webhooks')
      .set({ secret_ciphertext: sealed.secretCiphertext, previous_secret_ciphertext: sealed.previousSecretCiphertext })
      .where('id', '=', id)
      .execute()
  },

  /** The newest webhook's sealed secret: what the server secret must open at start. */
  async newestSealedSecret(db: DbOrTx): Promise<{ id: string; secretCiphertext: string } | undefined> {
    const row = await db
      .selectFrom('webhooks')
      .select(['id', 'secret_ciphertext'])
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst()
    return row && { id: row.id, secretCiphertext: row.secret_ciphertext }
  },

  /**
   * A secret lost with its server secret: replaced by `secretCiphertext` (a new one, which no one has seen), without a
   * previous one, and the webhook disabled for `reason` (a reason it had is replaced: this is what its project must do).
   */
  async replaceLostSecret(db: DbOrTx, id: string, secretCiphertext: string, nowMs: number, reason: string): Promise<void> {
    await db
      .updateTable('webhooks')
      .set((eb) => ({
        secret_ciphertext: secretCiphertext,
        previous_secret_ciphertext: null,
        previous_secret_expires_at: null,
        disabled_at: eb.fn.coalesce('disabled_at', eb.val(nowMs)),
        disabled_reason: reason,
      }))
      .where('id', '=', id)
      .execute()
  },

  /** Disables a webhook once; a second call keeps the first time and reason. */
  async disable(db: DbOrTx, id: string, nowMs: number, reason: string): Promise<void> {
    await db
      .updateTable('webhooks')
      .set({ disabled_at: nowMs, disabled_reason: reason })
      .where('id', '=', id)
      .where('disabled_at', 'is', null)
      .execute()
  },

  /**
   * Replaces the secret; the one replaced keeps signing beside it until `previousExpiresAtMs` (a second rotation in that
   * time drops the older one). Returns false when the project has no such webhook.
   */
  async rotateSecret(
    db: DbOrTx,
    projectId: string,
    id: string,
    change: { secretCiphertext: string; previousExpiresAtMs: number },
  ): Promise<boolean> {
    const result = await db
      .updateTable('webhooks')
      .set((eb) => ({
        // The right-hand side reads the row as it was before this UPDATE, on both databases.
        previous_secret_ciphertext: eb.ref('secret_ciphertext'),
        previous_secret_expires_at: change.previousExpiresAtMs,
        secret_ciphertext: change.secretCiphertext,
      }))
      .where('id', '=', id)
      .where('project_id', '=', projectId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  },

  /** Enables a disabled webhook, with a clean record of failures; enabling an enabled one changes nothing. */
  async enable(db: DbOrTx, projectId: string, id: string): Promise<void> {
    await db
      .updateTable('webhooks')
      .set({ disabled_at: null, disabled_reason: null, failing_since: null })
      .where('id', '=', id)
      .where('project_id', '=', projectId)
      .where('deleted_at', 'is', null)
      .where('disabled_at', 'is not', null)
      .execute()
  },

  /**
   * Records a failed attempt: the webhook's failures began at the first one since its last success. Returns when that
   * was, or undefined when the webhook is gone or already disabled.
   */
  async markFailing(db: DbOrTx, id: string, nowMs: number): Promise<number | undefined> {
    const row = await db
      .updateTable('webhooks')
      .set((eb) => ({ failing_since: eb.fn.coalesce('failing_since', eb.val(nowMs)) }))
      .where('id', '=', id)
      .where('disabled_at', 'is', null)
      .where('deleted_at', 'is', null)
      .returning('failing_since')
      .executeTakeFirst()
    return row?.failing_since ?? undefined
  },

  /** A successful attempt ends the webhooks' runs of failures. Writes only the rows that had one. */
  async clearFailing(db: DbOrTx, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return
    await db.updateTable('webhooks').set({ failing_since: null }).where('id', 'in', ids).where('failing_since', 'is not', null).execute()
  },

  /** The webhooks' targets, by id: on PostgreSQL one prepared statement for any number of ids (hot-query.ts). */
  async findTargets(db: DbOrTx, dialect: Dialect, ids: readonly string[]): Promise<Map<string, DeliveryTarget>> {
    if (ids.length === 0) return new Map()
    const rows =
      dialect === 'postgres'
        ? await findTargetsAll.execute(db, { ids })
        : await targetsWhere(db, sql`webhooks.id in (${sql.join(ids)})`).execute()
    return new Map(
      rows.map((row) => [
        row.id,
        {
          webhookId: row.id,
          projectId: row.project_id,
          projectName: row.name,
          plan: row.plan as PlanName,
          url: row.url,
          secretCiphertext: row.secret_ciphertext,
          previousSecretCiphertext: row.previous_secret_ciphertext,
          previousSecretExpiresAtMs: row.previous_secret_expires_at,
          failingSinceMs: row.failing_since,
          disabled: row.disabled_at !== null,
          deleted: row.deleted_at !== null,
        },
      ]),
    )
  },
}
