// Group commit of payload creations. The creations that arrive while the previous group is being written (or in the
// same turn of the event loop) are written together in one transaction: one quota reservation and one daily count
// per project, the payload rows, the responses their Idempotency-Keys keep, one commit. Each caller is answered after
// that commit, so a 201 still means the payload is durable. On PostgreSQL a commit waits for the log to reach the
// disk, and several round trips go with it: writing ten creations in one transaction costs little more than writing
// one. SQLite has one connection, so one group is written at a time; PostgreSQL writes a few groups at once on its
// pool, each on its own counter shard.
import { sql } from 'kysely'
import { CommitGroups } from '../../platform/db/commit-groups.js'
import { type Db, type Dialect, groupWaitLimitMs, type Tx } from '../../platform/db/database.js'
import { asColumns, HotQuery } from '../../platform/db/hot-query.js'
import type { KeptResponse } from '../../platform/db/idempotency-keys-repository.js'
import { isUniqueViolation } from '../../platform/db/unavailable.js'
import { recordKeptResponse } from '../../platform/http/idempotency.js'
import { utcDay } from '../../platform/utc.js'
import { monthGrants, pickShard, usageRepository } from '../projects/usage-repository.js'
import type { Payload } from './model.js'
import { newPayloadRow, payloadsRepository } from './repository.js'

/**
 * The creation's outcome: created, or the limit reached. monthCount is the month's count of the project's payloads read
 * after the commit, once it may have reached quota.countFrom; undefined below that, or if it could not be read.
 */
export type CreationResult = { created: true; monthCount: number | undefined } | { created: false }

export interface Creation {
  /**
   * The month and its limit; countFrom is the count from which the caller wants to know the month's count (the usage
   * warning's threshold). The count is read only when the month's grants, which it never passes, have reached it
   * (usage-repository.ts): one statement less a group for most of the month.
   */
  quota: { month: string; limit: number; countFrom: number }
  /**
   * Refuses a creation whose externalId is taken, with what the refusal should say (the payload it repeats): runs in the
   * transaction before the month's count, and again if the payload's insert did nothing (the externalId taken
   * meanwhile). A group written in one statement does not run it: that statement writes nothing when an externalId is
   * taken, and the group goes to the transaction, where this check tells the repeat. So it may check the externalId
   * and nothing else.
   */
  checkExternalId?: (tx: Tx) => Promise<void>
  /**
   * The response the request's Idempotency-Key keeps: recorded with the payload, in the group's one statement or its
   * transaction, so that both commit or neither. When the request no longer holds the key, the creation is refused
   * (409) and writes nothing.
   */
  keptResponse?: KeptResponse
}

/** How a group of `count` creations was written: in one statement (PostgreSQL's common case) or in a transaction. */
export type CreationsObserver = (way: 'one statement' | 'transaction', count: number) => void

interface Waiting {
  payload: Payload
  month: string
  limit: number
  creation: Creation
  resolve(result: CreationResult): void
  reject(error: unknown): void
}

/** A group's creations that fit in their month, each with its month's grants at the commit (Reservation). */
type Accepted = Map<Waiting, number>

/** A group's insert did less than all its rows: each is written again on its own, to learn which and why. */
class PartialInsert extends Error {}

/** A group larger than this is split: a statement's parameters stay well inside PostgreSQL's 65,535. */
const MAX_GROUP = 500
/** Groups written at once on PostgreSQL (each holds a pooled connection until its commit). */
const POSTGRES_GROUPS_IN_FLIGHT = 3

export class PayloadCreations {
  private readonly groups: CommitGroups<Waiting, Accepted>

  constructor(
    private readonly db: Db,
    private readonly dialect: Dialect,
    private readonly observe: CreationsObserver = () => {},
  ) {
    this.groups = new CommitGroups<Waiting, Accepted>({
      maxInFlight: dialect === 'sqlite' ? 1 : POSTGRES_GROUPS_IN_FLIGHT,
      maxGroup: MAX_GROUP,
      // One creation's refusal (a taken externalId) or bad row fails that creation only.
      write: (group) => this.insert(group),
      settle: (group, accepted) => this.answer(group, accepted),
      fail: (one, error) => one.reject(error),
      maxWaitMs: groupWaitLimitMs(dialect),
    })
  }

  /**
   * Inserts the payload (pending, counted on its creation day) if its project's month has room under the limit.
   * Resolves after the commit; monthCount is undefined if the count could not be read after it. Rejects with what
   * `checkExternalId` or `alongside` threw, or with the database's error.
   */
  create(payload: Payload, creation: Creation): Promise<CreationResult> {
    return new Promise((resolve, reject) => {
      this.groups.add({ payload, month: creation.quota.month, limit: creation.quota.limit, creation, resolve, reject })
    })
  }

  /** Answers a written group's creations, with the month's count after the commit where it may have reached countFrom. */
  private async answer(group: Waiting[], accepted: Accepted): Promise<void> {
    // A group's creations of one month under two limits (a change of plan between them) were counted one limit after
    // the other in its transaction: the later count's grants are the month's at the commit.
    const granted = new Map<string, number>()
    for (const [one, monthGranted] of accepted) granted.set(monthKey(one), Math.max(granted.get(monthKey(one)) ?? 0, monthGranted))
    const counts = new Map<string, number | undefined>()
    for (const one of accepted.keys()) {
      const key = monthKey(one)
      if (counts.has(key) || granted.get(key)! < one.creation.quota.countFrom) continue
      counts.set(key, await usageRepository.monthlyCount(this.db, one.payload.projectId, one.month).catch(() => undefined))
    }
    for (const one of group) one.resolve(accepted.has(one) ? { created: true, monthCount: counts.get(monthKey(one)) } : { created: false })
  }

  /** Writes the group in one transaction; returns the creations that fit in their month, with the month's grants. */
  private async insert(group: Waiting[]): Promise<Accepted> {
    const shard = pickShard(this.dialect)
    const monthGranted = await this.insertInOneStatement(group, shard)
    if (monthGranted !== undefined) {
      this.observe('one statement', group.length)
      return new Map(group.map((one) => [one, monthGranted]))
    }
    const byMonth = new Map<string, Waiting[]>()
    for (const one of group) {
      const key = `${monthKey(one)}\u0000${one.limit}`
      byMonth.set(key, [...(byMonth.get(key) ?? []), one])
    }
    const accepted = await this.db.transaction().execute(async (tx) => {
      for (const one of group) await one.creation.checkExternalId?.(tx)
      const fitting: Accepted = new Map()
      // In one order of projects, so that groups written at once lock their counter rows in the same order.
      for (const key of [...byMonth.keys()].sort()) {
        const creations = byMonth.get(key) ?? []
        const first = creations[0]!
        const quota = { projectId: first.payload.projectId, month: first.month, limit: first.limit }
        const { fit, monthGranted } = await usageRepository.reserveMonthlyPayloads(tx, this.dialect, quota, creations.length, shard)
        for (const one of creations.slice(0, fit)) fitting.set(one, monthGranted)
      }
      const accepted = group.filter((one) => fitting.has(one))
      const inserted = await payloadsRepository.insertMany(
        tx,
        this.dialect,
        accepted.map((one) => one.payload),
      )
      if (inserted < accepted.length) {
        if (group.length > 1) throw new PartialInsert('a payload of the group was not inserted')
        await group[0]!.creation.checkExternalId?.(tx)
        throw new Error('the payload was not inserted, and its check found nothing in the way')
      }
      for (const { creation } of accepted) if (creation.keptResponse) await recordKeptResponse(tx, creation.keptResponse)
      const perDay = new Map<string, { projectId: string; day: string; count: number }>()
      for (const { payload } of accepted) {
        const day = utcDay(payload.createdAtMs)
        const key = `${payload.projectId}\u0000${day}`
        const entry = perDay.get(key) ?? { projectId: payload.projectId, day, count: 0 }
        entry.count++
        perDay.set(key, entry)
      }
      for (const key of [...perDay.keys()].sort()) {
        const { projectId, day, count } = perDay.get(key)!
        await usageRepository.addDailyCount(tx, { projectId, day, status: 'pending', walletAdapter: '' }, count, shard)
      }
      return new Map(accepted.map((one) => [one, fitting.get(one)!]))
    })
    this.observe('transaction', group.length)
    return accepted
  }

  /**
   * The common case on PostgreSQL, in one statement and so one round trip, committed by itself: a group of one
   * project and day whose shard has quota for all of it, whose externalIds are free and all different, and whose
   * requests still hold their Idempotency-Keys, if they sent one. The shard's count, the rows, the daily count and the
   * kept responses are written only if the count fits, no payload holds one of the externalIds and every key's claim
   * is held (`where exists`); and not at all when the unique index
   * refuses an externalId taken since the statement's snapshot, by a creation racing on another connection (the
   * statement fails as a whole, which PostgreSQL logs as an error; a repeat of a committed externalId, an integrator's
   * ordinary retry, and the same externalId twice in one group do not). Returns the month's grants at the commit, read
   * as the count updates the shard's row (monthGrants, as reserveMonthlyPayloads); or undefined, having written
   * nothing, when the group is not such a group, the shard is short of quota or an externalId is taken: then the transaction does it, and
   * says which payload a repeat repeats, or which request no longer holds its key.
   */
  private async insertInOneStatement(group: Waiting[], shard: number): Promise<number | undefined> {
    if (this.dialect === 'sqlite') return undefined
    const first = group[0]!
    const day = utcDay(first.payload.createdAtMs)
    const alone = group.every(
      (one) =>
        one.payload.projectId === first.payload.projectId &&
        one.month === first.month &&
        one.limit === first.limit &&
        utcDay(one.payload.createdAtMs) === day,
    )
    if (!alone || holdsAnExternalIdTwice(group)) return undefined
    const params: GroupParams = {
      projectId: first.payload.projectId,
      month: first.month,
      limit: first.limit,
      shard,
      count: group.length,
      day,
      ...asColumns(
        group.map((one) => newPayloadRow(one.payload)),
        'rows_',
      ),
    }
    const kept = group.flatMap(({ creation }) => (creation.keptResponse ? [creation.keptResponse] : []))
    try {
      const counted =
        kept.length === 0
          ? await insertGroup.executeTakeFirst(this.db, params)
          : await insertGroupKeeping.executeTakeFirst(this.db, { ...params, keptCount: kept.length, ...asColumns(kept, 'kept_') })
      return counted?.counted === 1 ? Number(counted.month_granted) : undefined
    } catch (error) {
      // An externalId taken since the statement's snapshot: nothing was written.
      if (isUniqueViolation(error)) return undefined
      throw error
    }
  }
}

/** The payload columns a creation writes, in one order for the one-statement insert. */
const PAYLOAD_COLUMNS = Object.keys(newPayloadRow({} as Payload)) as PayloadColumn[]
type PayloadColumn = keyof ReturnType<typeof newPayloadRow>
const BIGINT_COLUMNS = new Set<PayloadColumn>(['expires_at', 'created_at'])

/** A group's rows as one array a column: `rows_uuid` holds the uuids of the group in order, and so on. */
type RowArrays = { [C in PayloadColumn as `rows_${C}`]: unknown[] }
type GroupParams = { projectId: string; month: string; limit: number; shard: number; count: number; day: string } & RowArrays
/** The responses a group's Idempotency-Keys keep, one array a column, and how many. */
type KeptArrays = { keptCount: number } & { [K in keyof KeptResponse as `kept_${K}`]: unknown[] }

/**
 * insertInOneStatement's statement. The group's rows go in as one array a column (unnest), so that its text is the
 * same for every size of group and it runs as a prepared statement (hot-query.ts). Written out as a list of VALUES,
 * its text changed with the size and PostgreSQL parsed and planned it for every group: about 250 µs of its time
 * a group (docs/performance.md, "2026-11-26, night").
 */
const insertGroup = new HotQuery((_db, p: GroupParams) => groupInsert(p))
/** The same, for a group that holds Idempotency-Keys: their claims locked and checked first, their responses kept. */
const insertGroupKeeping = new HotQuery((_db, p: GroupParams & KeptArrays) => groupInsert(p, p))

function groupInsert(p: GroupParams, kept?: KeptArrays) {
  const columns = sql.join(PAYLOAD_COLUMNS.map((column) => sql.ref(column)))
  const arrays = sql.join(
    PAYLOAD_COLUMNS.map((column) => sql`${p[`rows_${column}`]}::${sql.raw(BIGINT_COLUMNS.has(column) ? 'bigint' : 'text')}[]`),
  )
  // The claims this group's requests hold on their keys, locked until the commit: when a request's claim was taken over
  // (its lease ran out) or released, fewer are held than the group has keys, and the group writes nothing. Both parts
  // reach a key's row through its primary key whatever plan PostgreSQL keeps for the statement: a probe a key (the
  // lateral subquery's limit), and the responses written by `insert ... on conflict`, whose arbiter is that index. As an
  // update joined to the keys, its generic plan read every key of the project for each group: 2 ms a group once there
  // were a few thousand (docs/performance.md, "fifth session"). The insert's row is the held row itself with its
  // response, so it can only ever update.
  const held = kept
    ? sql`held as materialized (
        select taken.key, taken.fingerprint, taken.claim_token, taken.created_at, taken.expires_at from unnest(${kept.kept_key}::text[], ${kept.kept_claimToken}::text[]) as wanted(key, claim_token)
        cross join lateral (
          select key, fingerprint, claim_token, created_at, expires_at from idempotency_keys
          where project_id = ${p.projectId} and key = wanted.key and claim_token = wanted.claim_token and response_sealed is null
          limit 1 for update
        ) as taken
      ),`
    : sql.raw('')
  const allHeld = kept ? sql`and (select count(*) from held) = ${kept.keptCount}::int` : sql.raw('')
  const keep = kept
    ? sql`, kept as (
        insert into idempotency_keys
          (project_id, key, fingerprint, claim_token, lease_expires_at, status_code, response_sealed, created_at, expires_at)
        select ${p.projectId}::text, held.key, held.fingerprint, held.claim_token, null, wanted.status_code,
          wanted.response_sealed, held.created_at, held.expires_at
        from held
        join unnest(
          ${kept.kept_key}::text[], ${kept.kept_claimToken}::text[], ${kept.kept_statusCode}::int[], ${kept.kept_responseSealed}::text[]
        ) as wanted(key, claim_token, status_code, response_sealed) on wanted.key = held.key and wanted.claim_token = held.claim_token
        where exists (select 1 from counted)
        on conflict (project_id, key) do update
          set status_code = excluded.status_code, response_sealed = excluded.response_sealed, lease_expires_at = null
          where idempotency_keys.claim_token = excluded.claim_token
      )`
    : sql.raw('')
  return sql<{ counted: number; month_granted: number | null }>`
    with ${held} counted as (
      update usage_shards set used = used + ${p.count}::int
      where project_id = ${p.projectId} and month = ${p.month} and shard = ${p.shard}::int and used + ${p.count}::int <= granted
        and (select payload_count from project_usage where project_id = ${p.projectId} and month = ${p.month}) <= ${p.limit}::bigint
        -- No payload of the project holds one of the externalIds. One probe of the unique index an id (the lateral
        -- subquery's limit keeps it a probe): written as external_id = any(...), the generic plan PostgreSQL made while
        -- the table was nearly empty scanned all the project's payloads for each group.
        and not exists (
          select 1 from unnest(${p.rows_external_id}::text[]) as wanted(external_id)
          cross join lateral (
            select 1 from payloads where project_id = ${p.projectId} and external_id = wanted.external_id limit 1
          ) as taken
        )
        ${allHeld}
      returning used, ${monthGrants(p.projectId, p.month)} as month_granted
    ), inserted as (
      insert into payloads (${columns}) select ${columns} from unnest(${arrays}) as new_rows(${columns}) where exists (select 1 from counted)
    ), daily as (
      insert into payload_daily_counts (project_id, day, status, wallet_adapter, count, shard)
      select ${p.projectId}::text, ${p.day}::text, 'pending', '', ${p.count}::bigint, ${p.shard}::int where exists (select 1 from counted)
      on conflict (project_id, day, status, wallet_adapter, shard) do update set count = payload_daily_counts.count + excluded.count
    )${keep}
    select count(*)::int as counted, max(month_granted) as month_granted from counted`
}

function holdsAnExternalIdTwice(group: Waiting[]): boolean {
  const externalIds = group.flatMap((one) => (one.payload.externalId === null ? [] : [one.payload.externalId]))
  return new Set(externalIds).size < externalIds.length
}

const monthKey = (one: Waiting) => `${one.payload.projectId}\u0000${one.month}`
