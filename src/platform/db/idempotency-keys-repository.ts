// Idempotency-Key rows. A key is claimed by one INSERT, which the primary key (project, key) lets only one request
// win, on SQLite and on PostgreSQL, whichever instance it runs on; the winner completes it with the write that creates
// the resource: in that write's transaction, or in a payload creation group's one statement (payloads/creations.ts).
import { type Selectable, sql } from 'kysely'
import { CommitGroups } from './commit-groups.js'
import { type Db, type DbOrTx, type Dialect, groupWaitLimitMs } from './database.js'
import { asColumns, HotQuery } from './hot-query.js'
import { COLUMNS, type IdempotencyKeysTable } from './schema.js'

export type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>

/** A claim's row as it is written by the claim or its takeover. */
type FreshClaim = { projectId: string; key: string } & Pick<
  IdempotencyKeyRow,
  'fingerprint' | 'claim_token' | 'lease_expires_at' | 'created_at' | 'expires_at'
>

/** The columns a claim writes, whether it inserts the row or takes it over: each read by name (hot-query.ts). */
const claimColumns = (p: FreshClaim) => ({
  fingerprint: p.fingerprint,
  claim_token: p.claim_token,
  lease_expires_at: p.lease_expires_at,
  status_code: null,
  response_sealed: null,
  created_at: p.created_at,
  expires_at: p.expires_at,
})

// Every statement of a creation with an Idempotency-Key finds its row by the primary key: hot queries (hot-query.ts),
// prepared once a connection on PostgreSQL.
const insertClaim = new HotQuery((db, p: FreshClaim) =>
  db
    .insertInto('idempotency_keys')
    .values({ project_id: p.projectId, key: p.key, ...claimColumns(p) })
    .onConflict((oc) => oc.columns(['project_id', 'key']).doNothing())
    .returning('key'),
)
/**
 * Many claims in one statement (PostgreSQL), one array a column: the keys not yet taken are inserted, each claim's
 * token returned with its row. Of two claims of one key in the group, one is inserted and the other finds it taken.
 */
const insertClaims = new HotQuery(
  (_db, p: { [C in keyof FreshClaim as `claims_${C}`]: unknown[] }) =>
    sql<{ claim_token: string }>`
    insert into idempotency_keys (project_id, key, fingerprint, claim_token, lease_expires_at, created_at, expires_at)
    select project_id, key, fingerprint, claim_token, lease_expires_at, created_at, expires_at from unnest(
      ${p.claims_projectId}::text[], ${p.claims_key}::text[], ${p.claims_fingerprint}::text[], ${p.claims_claim_token}::text[],
      ${p.claims_lease_expires_at}::bigint[], ${p.claims_created_at}::bigint[], ${p.claims_expires_at}::bigint[]
    ) as claims(project_id, key, fingerprint, claim_token, lease_expires_at, created_at, expires_at)
    on conflict (project_id, key) do nothing
    returning claim_token`,
)
const takeOverClaim = new HotQuery((db, p: FreshClaim & { nowMs: number }) =>
  db
    .updateTable('idempotency_keys')
    .set(claimColumns(p))
    .where('project_id', '=', p.projectId)
    .where('key', '=', p.key)
    .where((eb) => eb.or([eb('expires_at', '<=', p.nowMs), eb('lease_expires_at', '<=', p.nowMs)]))
    .returning('key'),
)
const selectHolder = new HotQuery((db, p: { projectId: string; key: string }) =>
  db.selectFrom('idempotency_keys').select(COLUMNS.idempotency_keys).where('project_id', '=', p.projectId).where('key', '=', p.key),
)
const completeClaim = new HotQuery((db, p: KeptResponse) =>
  db
    .updateTable('idempotency_keys')
    .set({ status_code: p.statusCode, response_sealed: p.responseSealed, lease_expires_at: null })
    .where('project_id', '=', p.projectId)
    .where('key', '=', p.key)
    .where('claim_token', '=', p.claimToken)
    .where('response_sealed', 'is', null)
    .returning('key'),
)
const releaseClaim = new HotQuery((db, p: { projectId: string; key: string; claimToken: string }) =>
  db
    .deleteFrom('idempotency_keys')
    .where('project_id', '=', p.projectId)
    .where('key', '=', p.key)
    .where('claim_token', '=', p.claimToken)
    .where('response_sealed', 'is', null),
)

/** The response kept under a key, sealed, and the claim whose request recorded it (only its holder may). */
export type KeptResponse = {
  projectId: string
  key: string
  claimToken: string
  statusCode: number
  responseSealed: string
}

export interface IdempotencyClaim {
  projectId: string
  key: string
  fingerprint: string
  /** Random, per request: only the claim's holder may complete or release it. */
  claimToken: string
  nowMs: number
  leaseMs: number
  keepMs: number
}

function compareKeys(a: IdempotencyClaim, b: IdempotencyClaim): number {
  if (a.projectId !== b.projectId) return a.projectId < b.projectId ? -1 : 1
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0
}

function freshClaim(claim: IdempotencyClaim): FreshClaim {
  return {
    projectId: claim.projectId,
    key: claim.key,
    fingerprint: claim.fingerprint,
    claim_token: claim.claimToken,
    lease_expires_at: claim.nowMs + claim.leaseMs,
    created_at: claim.nowMs,
    expires_at: claim.nowMs + claim.keepMs,
  }
}

export const idempotencyKeysRepository = {
  /**
   * Claims the key for a request: true when this request now holds it, else the row that holds it. A key whose
   * 24 hours have passed, or whose holder's lease ran out before it completed (its instance died), is taken over.
   */
  async claim(db: DbOrTx, claim: IdempotencyClaim): Promise<true | IdempotencyKeyRow> {
    if (await insertClaim.executeTakeFirst(db, freshClaim(claim))) return true
    return idempotencyKeysRepository.claimTaken(db, claim)
  },

  /** The rest of `claim` once the key was found taken: a takeover if its holder's time is up, else the holder's row. */
  async claimTaken(db: DbOrTx, claim: IdempotencyClaim): Promise<true | IdempotencyKeyRow> {
    if (await takeOverClaim.executeTakeFirst(db, { ...freshClaim(claim), nowMs: claim.nowMs })) return true
    const holder = await selectHolder.executeTakeFirst(db, { projectId: claim.projectId, key: claim.key })
    // Released between the insert and this read: the caller may simply try again.
    return holder ?? idempotencyKeysRepository.claim(db, claim)
  },

  /**
   * Inserts the claims of keys not yet taken, with one commit: one statement on PostgreSQL, one transaction of inserts
   * on SQLite (in-process, where the commit is what costs). Returns the tokens of the claims inserted.
   */
  async insertClaims(db: Db, dialect: Dialect, claims: IdempotencyClaim[]): Promise<Set<string>> {
    // In one order of keys: a group inserting a key another group has inserted and not yet committed waits for it, so
    // two groups holding the same keys in opposite orders would each wait for the other.
    const ordered = [...claims].sort(compareKeys)
    if (dialect === 'postgres') {
      const rows = await insertClaims.execute(db, asColumns(ordered.map(freshClaim), 'claims_'))
      return new Set(rows.map((row) => row.claim_token))
    }
    return db.transaction().execute(async (tx) => {
      const inserted = new Set<string>()
      for (const claim of ordered) if (await insertClaim.executeTakeFirst(tx, freshClaim(claim))) inserted.add(claim.claimToken)
      return inserted
    })
  },

  /** Records the response of the request that holds the claim; false when it no longer holds it. */
  async complete(db: DbOrTx, done: KeptResponse): Promise<boolean> {
    return (await completeClaim.executeTakeFirst(db, done)) !== undefined
  },

  /** Lets go of a claim whose request ended without a response to keep (it failed), so that a retry can run. */
  async release(db: DbOrTx, claim: { projectId: string; key: string; claimToken: string }): Promise<void> {
    await releaseClaim.execute(db, claim)
  },

  /** The kept responses (sealed, as they hold a webhook's secret), a page at a time in key order, for re-sealing. */
  async listSealedResponses(
    db: DbOrTx,
    after: { projectId: string; key: string } | undefined,
    limit: number,
  ): Promise<Array<{ projectId: string; key: string; responseSealed: string }>> {
    let query = db
      .selectFrom('idempotency_keys')
      .select(['project_id', 'key', 'response_sealed'])
      .where('response_sealed', 'is not', null)
      .orderBy('project_id')
      .orderBy('key')
      .limit(limit)
    if (after) {
      query = query.where((eb) =>
        eb.or([eb('project_id', '>', after.projectId), eb.and([eb('project_id', '=', after.projectId), eb('key', '>', after.key)])]),
      )
    }
    const rows = await query.execute()
    return rows.map((row) => ({ projectId: row.project_id, key: row.key, responseSealed: row.response_sealed as string }))
  },

  /** The newest kept response, sealed: what the server secret must open at start. */
  async newestSealedResponse(db: DbOrTx): Promise<string | undefined> {
    const row = await db
      .selectFrom('idempotency_keys')
      .select('response_sealed')
      .where('response_sealed', 'is not', null)
      .orderBy('expires_at', 'desc')
      .orderBy('project_id', 'desc')
      .orderBy('key', 'desc')
      .limit(1)
      .executeTakeFirst()
    return row?.response_sealed ?? undefined
  },

  /** Re-seals a kept response; with statusCode, replaces what it answers (a response lost with its server secret). */
  async replaceSealedResponse(
    db: DbOrTx,
    kept: { projectId: string; key: string; responseSealed: string; statusCode?: number },
  ): Promise<void> {
    await db
      .updateTable('idempotency_keys')
      .set({ response_sealed: kept.responseSealed, ...(kept.statusCode === undefined ? {} : { status_code: kept.statusCode }) })
      .where('project_id', '=', kept.projectId)
      .where('key', '=', kept.key)
      .execute()
  },

  /** Deletes the keys past their 24 hours; returns how many. Run every minute, each run has at most a minute's keys. */
  async deleteExpired(db: DbOrTx, nowMs: number): Promise<number> {
    const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', nowMs).executeTakeFirst()
    return Number(result.numDeletedRows)
  },
}

interface WaitingClaim {
  claim: IdempotencyClaim
  resolve(held: true | IdempotencyKeyRow): void
  reject(error: unknown): void
}

/** Claim groups written at once on PostgreSQL (each holds a pooled connection until it is answered). */
const POSTGRES_CLAIM_GROUPS_IN_FLIGHT = 3

/**
 * Group commit of claims: the claims that arrive while earlier ones are being written (or in the same turn of the
 * event loop) are inserted with one commit, as creations are (payloads/creations.ts); a claim whose key is taken goes
 * on alone (claimTaken).
 */
export class IdempotencyClaims {
  private readonly groups: CommitGroups<WaitingClaim, Set<string>>

  constructor(db: Db, dialect: Dialect) {
    this.groups = new CommitGroups<WaitingClaim, Set<string>>({
      // SQLite has one connection.
      maxInFlight: dialect === 'sqlite' ? 1 : POSTGRES_CLAIM_GROUPS_IN_FLIGHT,
      maxGroup: 500,
      write: (group) =>
        idempotencyKeysRepository.insertClaims(
          db,
          dialect,
          group.map((one) => one.claim),
        ),
      settle: (group, inserted) => {
        for (const one of group) {
          if (inserted.has(one.claim.claimToken)) one.resolve(true)
          else idempotencyKeysRepository.claimTaken(db, one.claim).then(one.resolve, one.reject)
        }
      },
      fail: (one, error) => one.reject(error),
      maxWaitMs: groupWaitLimitMs(dialect),
    })
  }

  /** As idempotencyKeysRepository.claim. */
  claim(claim: IdempotencyClaim): Promise<true | IdempotencyKeyRow> {
    return new Promise((resolve, reject) => this.groups.add({ claim, resolve, reject }))
  }
}
