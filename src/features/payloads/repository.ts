// Payload rows: how a payload maps to its row, writing new ones, and reading them. Moves of a payload once written are
// in transitions-repository.ts.
import { type Insertable, type Selectable, sql } from 'kysely'
import type { DbOrTx, Dialect } from '../../platform/db/database.js'
import { HotQuery } from '../../platform/db/hot-query.js'
import { COLUMNS, type PayloadsTable } from '../../platform/db/schema.js'
import type { MultisignState } from '../signing/multisign/model.js'
import type { DeliveredAmount, Payload, PayloadStatus, PayloadType, SubmissionOutcome } from './model.js'
import type { PayloadPage } from './schemas.js'

type PayloadRow = Selectable<PayloadsTable>

/** A payload's place in the list order, where a cursor page starts. */
export interface ListPosition {
  createdAt: number
  uuid: string
}

/** A page of a project's payloads, its cursor found. */
export type PayloadListing = Omit<PayloadPage, 'after'> & { after?: ListPosition }

export function rowToPayload(row: PayloadRow): Payload {
  return {
    uuid: row.uuid,
    projectId: row.project_id,
    type: row.type as PayloadType,
    status: row.status as PayloadStatus,
    transaction: row.transaction_json === null ? null : (JSON.parse(row.transaction_json) as Record<string, unknown>),
    message: row.message,
    challenge: row.challenge,
    returnUrl: row.return_url,
    customInstructions: row.custom_instructions,
    expiresAtMs: row.expires_at,
    createdAtMs: row.created_at,
    resolvedAtMs: row.resolved_at,
    signerAddress: row.signer_address,
    txHash: row.tx_hash,
    txBlob: row.tx_blob,
    walletAdapter: row.wallet_adapter,
    publicKey: row.public_key,
    signature: row.signature,
    submitEngineResult: row.submit_engine_result,
    validatedResult: row.validated_result,
    validatedLedgerIndex: row.validated_ledger_index,
    validatedTxHash: row.validated_tx_hash,
    signers: row.signers_json === null ? null : (JSON.parse(row.signers_json) as string[]),
    outcome: row.outcome as SubmissionOutcome | null,
    deliveredAmount: row.delivered_amount === null ? null : (JSON.parse(row.delivered_amount) as DeliveredAmount),
    multisign: row.multisign_json === null ? null : (JSON.parse(row.multisign_json) as MultisignState),
    externalId: row.external_id,
    metadata: row.metadata_json === null ? null : (JSON.parse(row.metadata_json) as Record<string, unknown>),
    submissionInDoubt: row.status === 'pending' && row.submission_claimed !== 0,
  }
}

type NewPayloadRow = Pick<
  Insertable<PayloadsTable>,
  | 'uuid'
  | 'project_id'
  | 'type'
  | 'status'
  | 'transaction_json'
  | 'message'
  | 'challenge'
  | 'return_url'
  | 'custom_instructions'
  | 'expires_at'
  | 'created_at'
  | 'signers_json'
  | 'multisign_json'
  | 'external_id'
  | 'metadata_json'
>

const insertPayload = new HotQuery((db, p: NewPayloadRow) =>
  db
    .insertInto('payloads')
    .values({
      uuid: p.uuid,
      project_id: p.project_id,
      type: p.type,
      status: p.status,
      transaction_json: p.transaction_json,
      message: p.message,
      challenge: p.challenge,
      return_url: p.return_url,
      custom_instructions: p.custom_instructions,
      expires_at: p.expires_at,
      created_at: p.created_at,
      external_id: p.external_id,
      metadata_json: p.metadata_json,
      signers_json: p.signers_json,
      multisign_json: p.multisign_json,
    })
    // The one conflict that can happen: another payload of the project holds the externalId (the uuid is random).
    .onConflict((oc) => oc.columns(['project_id', 'external_id']).doNothing())
    .returning('uuid'),
)
const selectPayload = new HotQuery((db, p: { uuid: string }) =>
  db.selectFrom('payloads').select(COLUMNS.payloads).where('uuid', '=', p.uuid),
)
/**
 * PostgreSQL only: the uuids as one array, so that one statement serves every number of them, each row reached by a
 * probe of the primary key whatever plan PostgreSQL keeps (hot-query.ts). As `uuid = any($1)`, the generic plan made on
 * a fresh table (no statistics yet) scanned the whole table for each group until the first ANALYZE: 25 ms a group
 * once 100,000 payloads had been created.
 */
const selectPayloads = new HotQuery(
  (_db, p: { uuids: string[] }) => sql<PayloadRow>`select ${sql.join(COLUMNS.payloads.map((column) => sql.ref(`found.${column}`)))}
    from unnest(${p.uuids}::text[]) as wanted(uuid)
    cross join lateral (
      select ${sql.join(COLUMNS.payloads.map((column) => sql.ref(column)))} from payloads where uuid = wanted.uuid limit 1
    ) as found`,
)

export function newPayloadRow(payload: Payload): NewPayloadRow {
  return {
    uuid: payload.uuid,
    project_id: payload.projectId,
    type: payload.type,
    status: payload.status,
    transaction_json: payload.transaction === null ? null : JSON.stringify(payload.transaction),
    message: payload.message,
    challenge: payload.challenge,
    return_url: payload.returnUrl,
    custom_instructions: payload.customInstructions,
    expires_at: payload.expiresAtMs,
    created_at: payload.createdAtMs,
    signers_json: payload.signers === null ? null : JSON.stringify(payload.signers),
    multisign_json: payload.multisign === null ? null : JSON.stringify(payload.multisign),
    external_id: payload.externalId,
    metadata_json: payload.metadata === null ? null : JSON.stringify(payload.metadata),
  }
}

const CLASSIC_ADDRESS = /^r[1-9A-HJ-NP-Za-km-z]{24,34}$/
const UUID_START = /^[0-9a-f-]{4,36}$/

/** What a search term is: a signer's address, the start of a uuid (lower-case, as stored), or else an externalId (exact). */
function searchOf(term: string): { kind: 'signer' | 'uuid' | 'externalId'; value: string } {
  const value = term.trim()
  if (CLASSIC_ADDRESS.test(value)) return { kind: 'signer', value }
  if (UUID_START.test(value.toLowerCase())) return { kind: 'uuid', value: value.toLowerCase() }
  return { kind: 'externalId', value }
}

export const payloadsRepository = {
  /** Inserts the payload; false when another payload of the project already has its externalId. */
  async insert(db: DbOrTx, payload: Payload): Promise<boolean> {
    const inserted = await insertPayload.executeTakeFirst(db, newPayloadRow(payload))
    return inserted !== undefined
  },

  /**
   * Inserts several payloads: on PostgreSQL in one statement (one round trip), on SQLite one prepared insert after
   * another on the connection (no round trips to save there). Returns how many were inserted: fewer when some
   * externalId was taken (by another payload of the project, or by another of these).
   */
  async insertMany(db: DbOrTx, dialect: Dialect, payloads: Payload[]): Promise<number> {
    if (payloads.length === 1 || dialect === 'sqlite') {
      let inserted = 0
      for (const payload of payloads) if (await payloadsRepository.insert(db, payload)) inserted++
      return inserted
    }
    if (payloads.length === 0) return 0
    const rows = await db
      .insertInto('payloads')
      .values(payloads.map(newPayloadRow))
      .onConflict((oc) => oc.columns(['project_id', 'external_id']).doNothing())
      .returning('uuid')
      .execute()
    return rows.length
  },

  async findByExternalId(db: DbOrTx, projectId: string, externalId: string): Promise<Payload | undefined> {
    const row = await db
      .selectFrom('payloads')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('external_id', '=', externalId)
      .executeTakeFirst()
    return row && rowToPayload(row)
  },

  async findByUuid(db: DbOrTx, uuid: string): Promise<Payload | undefined> {
    const row = await selectPayload.executeTakeFirst(db, { uuid })
    return row && rowToPayload(row)
  },

  /**
   * PostgreSQL only: the payloads of these uuids that exist, in one statement, in the order of the uuids. One uuid is read
   * by the one-uuid statement, which keeps its generic plan; the array's is planned again for every small array.
   */
  async findManyByUuid(db: DbOrTx, uuids: string[]): Promise<Payload[]> {
    const rows = uuids.length === 1 ? await selectPayload.execute(db, { uuid: uuids[0]! }) : await selectPayloads.execute(db, { uuids })
    return rows.map(rowToPayload)
  },

  /** Where a payload stands in its project's list (newest first, ties by uuid); undefined when the project has no such payload. */
  async listPosition(db: DbOrTx, projectId: string, uuid: string): Promise<ListPosition | undefined> {
    const row = await db
      .selectFrom('payloads')
      .select(['created_at', 'uuid'])
      .where('uuid', '=', uuid)
      .where('project_id', '=', projectId)
      .executeTakeFirst()
    return row && { createdAt: row.created_at, uuid: row.uuid }
  },

  async listForProject(db: DbOrTx, projectId: string, page: PayloadListing): Promise<Payload[]> {
    const rows = await listQuery(db, projectId, page).execute()
    return rows.map(rowToPayload)
  },
}

/** A page of a project's payloads, newest first (ties by uuid), as listForProject reads it; exported for its plan's test. */
export function listQuery(db: DbOrTx, projectId: string, page: PayloadListing) {
  let query = db.selectFrom('payloads').selectAll().where('project_id', '=', projectId)
  const { after } = page
  if (after !== undefined) query = query.where((eb) => eb(eb.refTuple('created_at', 'uuid'), '<', eb.tuple(after.createdAt, after.uuid)))
  if (page.status) query = query.where('status', '=', page.status)
  if (page.type) query = query.where('type', '=', page.type)
  if (page.externalId !== undefined) query = query.where('external_id', '=', page.externalId)
  if (page.search !== undefined) {
    const search = searchOf(page.search)
    query =
      search.kind === 'signer'
        ? query.where('signer_address', '=', search.value)
        : search.kind === 'uuid'
          ? // A range on the primary key finds the prefix's few rows in either database (LIKE alone scans the table:
            // PostgreSQL uses an index for it only under the C collation, SQLite only when LIKE is case-sensitive);
            // 'g' sorts after every character a uuid holds. LIKE keeps the match exact whatever the collation.
            query.where('uuid', '>=', search.value).where('uuid', '<', `${search.value}g`).where('uuid', 'like', `${search.value}%`)
          : query.where('external_id', '=', search.value)
  }
  return query.orderBy('created_at', 'desc').orderBy('uuid', 'desc').limit(page.limit).offset(page.offset)
}
