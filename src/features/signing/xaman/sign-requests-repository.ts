// The Xaman sign requests created for payloads, until their outcome has been applied.
import type { DbOrTx } from '../../../platform/db/database.js'

export const xamanSignRequestsRepository = {
  async insert(db: DbOrTx, request: { xamanUuid: string; payloadUuid: string; createdAtMs: number }): Promise<void> {
    await db
      .insertInto('xaman_sign_requests')
      .values({ xaman_uuid: request.xamanUuid, payload_uuid: request.payloadUuid, created_at: request.createdAtMs, settled_at: null })
      .execute()
  },

  async countForPayload(db: DbOrTx, payloadUuid: string): Promise<number> {
    const row = await db
      .selectFrom('xaman_sign_requests')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('payload_uuid', '=', payloadUuid)
      .executeTakeFirstOrThrow()
    return Number(row.count)
  },

  /** Xaman uuids of the payload's requests not settled yet, newest first. */
  async listUnsettled(db: DbOrTx, payloadUuid: string): Promise<string[]> {
    const rows = await db
      .selectFrom('xaman_sign_requests')
      .select('xaman_uuid')
      .where('payload_uuid', '=', payloadUuid)
      .where('settled_at', 'is', null)
      .orderBy('created_at', 'desc')
      .execute()
    return rows.map((row) => row.xaman_uuid)
  },

  async markSettled(db: DbOrTx, xamanUuid: string, nowMs: number): Promise<void> {
    await db.updateTable('xaman_sign_requests').set({ settled_at: nowMs }).where('xaman_uuid', '=', xamanUuid).execute()
  },
}
