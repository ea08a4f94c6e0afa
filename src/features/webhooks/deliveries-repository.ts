// Webhook delivery rows: the transactional outbox of events, claimed by dispatchers under a lease.
import { type Expression, type Insertable, type Kysely, type Selectable, type SqlBool, sql } from 'kysely'
import { BASE64URL_ALPHABET, newIdStem } from '../../platform/crypto/ids.js'
import type { DbOrTx, Dialect } from '../../platform/db/database.js'
import { asColumns, HotQuery } from '../../platform/db/hot-query.js'
import { claimDueRows, claimHolds, type OutboxClaim, releaseClaimedRows } from '../../platform/db/outbox.js'
import type { Database, WebhookDeliveriesTable } from '../../platform/db/schema.js'
import type { PayloadEvent } from '../payloads/model.js'
import { WEBHOOKS_PLAN } from '../projects/plans.js'
import type { DeliveryEvent, DeliveryState, WebhookDelivery } from './model.js'

export { claimOf } from '../../platform/db/outbox.js'

const insertDelivery = new HotQuery((db, row: Required<Insertable<WebhookDeliveriesTable>>) =>
  db.insertInto('webhook_deliveries').values({
    id: row.id,
    webhook_id: row.webhook_id,
    project_id: row.project_id,
    payload_uuid: row.payload_uuid,
    event: row.event,
    body: row.body,
    state: row.state,
    attempts: row.attempts,
    next_attempt_at: row.next_attempt_at,
    lease_expires_at: row.lease_expires_at,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    created_at: row.created_at,
    completed_at: row.completed_at,
  }),
)

/** How many deliveries one event's statement can name: two characters of base64url after an id stem. */
export const DELIVERIES_AN_EVENT_CAN_NAME = BASE64URL_ALPHABET.length ** 2

/** A payload event whose deliveries are written: one per webhook of its project that receives the event now. */
export interface DeliveryEventRow {
  projectId: string
  payloadUuid: string
  event: PayloadEvent
  body: string
}

/** An event's part of an insert of deliveries, as values (one event) or as the columns of `unnest` (several). */
interface EventSql {
  idStem: unknown
  projectId: unknown
  payloadUuid: unknown
  event: unknown
  eventPattern: unknown
  body: unknown
}

const INSERTED_COLUMNS = sql`id, webhook_id, project_id, payload_uuid, event, body, state, attempts, next_attempt_at,
  lease_expires_at, last_status_code, last_error, created_at, completed_at`

/**
 * A payload event's subscribers: the webhooks of the project that receive the event now (enabled, not deleted, the
 * project on the plan that has webhooks), numbered from 0 in the order of their own ids. `eventPattern` is the event,
 * quoted as JSON, as a LIKE pattern (`!` escapes) that matches the webhook's list of events (JSON text, written by the
 * service) when the event is in it.
 */
const subscribersOf = (e: EventSql) => sql`(
    select webhooks.id, row_number() over (order by webhooks.id) - 1 as n
    from webhooks inner join projects on projects.id = webhooks.project_id
    where webhooks.project_id = ${e.projectId} and projects.plan = ${sql.lit(WEBHOOKS_PLAN)}
      and webhooks.disabled_at is null and webhooks.deleted_at is null
      and webhooks.events_json like ${e.eventPattern} escape '!'
  ) as subscriber`

/**
 * A delivery to each of subscribersOf: its id is the event's `idStem` (newIdStem: 20 characters of the 22 of an id) and
 * two characters of base64url numbering the subscriber, which names up to DELIVERIES_AN_EVENT_CAN_NAME of them (a
 * project has at most MAX_WEBHOOKS_PER_PROJECT).
 */
const deliveryValues = (e: EventSql, nowMs: unknown) => sql`${e.idStem}
    || substr(${sql.lit(BASE64URL_ALPHABET)}, cast(subscriber.n / 64 + 1 as integer), 1)
    || substr(${sql.lit(BASE64URL_ALPHABET)}, cast(subscriber.n % 64 + 1 as integer), 1),
  subscriber.id, ${e.projectId}, ${e.payloadUuid}, ${e.event}, ${e.body}, ${sql.lit('pending')}, 0,
  cast(${nowMs} as bigint), null, null, null, cast(${nowMs} as bigint), null`

type OneEvent = { idStem: string; projectId: string; payloadUuid: string; event: string; eventPattern: string; body: string }

/** One event's deliveries in one statement, the subscribers read by the insert itself (SQLite). */
const insertForSubscribers = new HotQuery(
  (_db, p: OneEvent & { nowMs: number }) =>
    sql<never>`insert into webhook_deliveries (${INSERTED_COLUMNS}) select ${deliveryValues(p, p.nowMs)} from ${subscribersOf(p)}`,
)

/**
 * Several events' deliveries in one statement (PostgreSQL): the events go in as one array a column (unnest), so that
 * the text is the same for any number of events and runs as a prepared statement (platform/db/hot-query.ts).
 */
const insertForSubscribersAll = new HotQuery((_db, p: { [K in keyof OneEvent as `all_${K}`]: string[] } & { nowMs: number }) => {
  const e = {
    idStem: sql.ref('e.id_stem'),
    projectId: sql.ref('e.project_id'),
    payloadUuid: sql.ref('e.payload_uuid'),
    event: sql.ref('e.event'),
    eventPattern: sql.ref('e.event_pattern'),
    body: sql.ref('e.body'),
  }
  return sql<never>`insert into webhook_deliveries (${INSERTED_COLUMNS})
    select ${deliveryValues(e, p.nowMs)}
    from unnest(${p.all_idStem}::text[], ${p.all_projectId}::text[], ${p.all_payloadUuid}::text[], ${p.all_event}::text[],
      ${p.all_eventPattern}::text[], ${p.all_body}::text[]) as e(id_stem, project_id, payload_uuid, event, event_pattern, body)
    cross join lateral ${subscribersOf(e)}`
})

type Succeeded = { leaseExpiresAtMs: number; statusCode: number; completedAtMs: number }

/** Successes under one lease and status code, recorded together: the ids' condition, and the rest of the statement. */
const completeSucceededWhere = (db: Kysely<Database>, ids: Expression<SqlBool>, p: Succeeded) =>
  db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      state: sql.lit('succeeded'),
      attempts: eb('attempts', '+', 1),
      lease_expires_at: null,
      last_status_code: p.statusCode,
      last_error: null,
      completed_at: p.completedAtMs,
    }))
    .where(ids)
    .where('state', '=', sql.lit('sending'))
    .where('lease_expires_at', '=', p.leaseExpiresAtMs)

/**
 * On PostgreSQL the ids go in as one array, so that one text serves any number of them, prepared once a connection
 * (hot-query.ts): with a list of its own for each count it was parsed and planned at every flush.
 */
const completeSucceededAll = new HotQuery((db, p: Succeeded & { ids: readonly string[] }) =>
  completeSucceededWhere(db, sql<SqlBool>`id = any(${p.ids}::text[])`, p),
)

const toDelivery = (row: Selectable<WebhookDeliveriesTable>): WebhookDelivery => ({
  id: row.id,
  webhookId: row.webhook_id,
  projectId: row.project_id,
  payloadUuid: row.payload_uuid,
  event: row.event as DeliveryEvent,
  body: row.body,
  state: row.state as DeliveryState,
  attempts: row.attempts,
  nextAttemptAtMs: row.next_attempt_at,
  leaseExpiresAtMs: row.lease_expires_at,
  lastStatusCode: row.last_status_code,
  lastError: row.last_error,
  createdAtMs: row.created_at,
  completedAtMs: row.completed_at,
})

/** The outcome of one attempt, or of deciding not to make it. */
export interface DeliveryOutcome {
  state: DeliveryState
  attempts: number
  nextAttemptAtMs: number
  lastStatusCode: number | null
  lastError: string | null
  completedAtMs: number | null
}

export const webhookDeliveriesRepository = {
  /**
   * One statement a delivery (an event has one per subscribed webhook, most often just one): several are written
   * together only inside the caller's transaction.
   */
  async insertMany(db: DbOrTx, deliveries: WebhookDelivery[]): Promise<void> {
    for (const d of deliveries) {
      await insertDelivery.execute(db, {
        id: d.id,
        webhook_id: d.webhookId,
        project_id: d.projectId,
        payload_uuid: d.payloadUuid,
        event: d.event,
        body: d.body,
        state: d.state,
        attempts: d.attempts,
        next_attempt_at: d.nextAttemptAtMs,
        lease_expires_at: d.leaseExpiresAtMs,
        last_status_code: d.lastStatusCode,
        last_error: d.lastError,
        created_at: d.createdAtMs,
        completed_at: d.completedAtMs,
      })
    }
  },

  /**
   * Writes payload events' deliveries to the webhooks of their projects that receive them now, each event's with its
   * `body` (in the caller's transaction: the payloads' changes and their deliveries commit together): one statement on
   * PostgreSQL, one an event on SQLite (in-process, with no round trip to share).
   */
  async insertForSubscribers(db: DbOrTx, dialect: Dialect, events: readonly DeliveryEventRow[], nowMs: number): Promise<void> {
    if (events.length === 0) return
    const rows: OneEvent[] = events.map((event) => ({
      ...event,
      idStem: newIdStem('dlv'),
      eventPattern: `%${JSON.stringify(event.event).replace(/[!%_]/g, '!$&')}%`,
    }))
    if (dialect === 'sqlite') {
      for (const row of rows) await insertForSubscribers.execute(db, { ...row, nowMs })
      return
    }
    await insertForSubscribersAll.execute(db, { ...asColumns(rows, 'all_'), nowMs })
  },

  /** Due deliveries moved to 'sending' under a lease (see claimDueRows), except those of `excludeWebhookIds`. */
  async claimDue(
    db: DbOrTx,
    dialect: Dialect,
    claim: { nowMs: number; leaseExpiresAtMs: number; limit: number; excludeWebhookIds: readonly string[] },
  ): Promise<WebhookDelivery[]> {
    const { excludeWebhookIds, ...lease } = claim
    const rows = await claimDueRows(db, dialect, 'webhook_deliveries', {
      ...lease,
      except: { column: 'webhook_id', ids: excludeWebhookIds },
    })
    return rows.map(toDelivery)
  },

  /** Records an attempt's outcome if the claim still holds; returns false when another worker took the delivery over. */
  async complete(db: DbOrTx, claim: OutboxClaim, outcome: DeliveryOutcome): Promise<boolean> {
    const result = await db
      .updateTable('webhook_deliveries')
      .set({
        state: outcome.state,
        attempts: outcome.attempts,
        next_attempt_at: outcome.nextAttemptAtMs,
        lease_expires_at: null,
        last_status_code: outcome.lastStatusCode,
        last_error: outcome.lastError,
        completed_at: outcome.completedAtMs,
      })
      .where(claimHolds(claim))
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  },

  /**
   * Records many successful attempts at once: one statement per claim and status code. A claim's lease is unique to
   * it (a takeover's lease is always later), so it alone tells whether the claim still holds.
   */
  async completeSucceeded(
    db: DbOrTx,
    dialect: Dialect,
    successes: ReadonlyArray<{ claim: OutboxClaim; statusCode: number }>,
    completedAtMs: number,
  ): Promise<void> {
    const groups = new Map<string, { leaseExpiresAtMs: number; statusCode: number; ids: string[] }>()
    for (const { claim, statusCode } of successes) {
      const key = `${claim.leaseExpiresAtMs}:${statusCode}`
      const group = groups.get(key) ?? { leaseExpiresAtMs: claim.leaseExpiresAtMs, statusCode, ids: [] }
      group.ids.push(claim.id)
      groups.set(key, group)
    }
    for (const group of groups.values()) {
      if (dialect === 'postgres') await completeSucceededAll.execute(db, { ...group, completedAtMs })
      else await completeSucceededWhere(db, sql<SqlBool>`id in (${sql.join(group.ids)})`, { ...group, completedAtMs }).execute()
    }
  },

  /** Hands deliveries claimed together (one lease) back unchanged, for a later run: their webhook had no free sending slot. */
  release(db: DbOrTx, ids: readonly string[], leaseExpiresAtMs: number): Promise<void> {
    return releaseClaimedRows(db, 'webhook_deliveries', ids, leaseExpiresAtMs)
  },

  /** Cancels deliveries claimed together (one lease) that may no longer be sent. */
  async cancelClaimed(db: DbOrTx, ids: readonly string[], leaseExpiresAtMs: number, nowMs: number): Promise<void> {
    if (ids.length === 0) return
    await db
      .updateTable('webhook_deliveries')
      .set({ state: 'cancelled', lease_expires_at: null, completed_at: nowMs })
      .where('id', 'in', ids)
      .where('state', '=', 'sending')
      .where('lease_expires_at', '=', leaseExpiresAtMs)
      .execute()
  },

  /** Cancels the webhook's deliveries that wait for an attempt (deleted or disabled webhook). */
  async cancelPendingForWebhook(db: DbOrTx, webhookId: string, nowMs: number): Promise<void> {
    await db
      .updateTable('webhook_deliveries')
      .set({ state: 'cancelled', completed_at: nowMs, lease_expires_at: null })
      .where('webhook_id', '=', webhookId)
      .where('state', '=', 'pending')
      .execute()
  },

  /** Cancels the deliveries that wait for an attempt of every webhook of the project (moved to a plan without webhooks). */
  async cancelPendingForProject(db: DbOrTx, projectId: string, nowMs: number): Promise<void> {
    await db
      .updateTable('webhook_deliveries')
      .set({ state: 'cancelled', completed_at: nowMs, lease_expires_at: null })
      .where('webhook_id', 'in', db.selectFrom('webhooks').select('id').where('project_id', '=', projectId))
      .where('state', '=', 'pending')
      .execute()
  },

  /** The webhook's deliveries, newest first. */
  async listForWebhook(db: DbOrTx, webhookId: string, page: { limit: number; offset: number }): Promise<WebhookDelivery[]> {
    const rows = await db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('webhook_id', '=', webhookId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute()
    return rows.map(toDelivery)
  },

  /** The deliveries of one payload's events in a project, newest first (a payload has a few: one per webhook and retry series). */
  async listForPayload(db: DbOrTx, projectId: string, payloadUuid: string): Promise<WebhookDelivery[]> {
    const rows = await db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('payload_uuid', '=', payloadUuid)
      .where('project_id', '=', projectId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute()
    return rows.map(toDelivery)
  },

  async findForWebhook(db: DbOrTx, webhookId: string, id: string): Promise<WebhookDelivery | undefined> {
    const row = await db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('id', '=', id)
      .where('webhook_id', '=', webhookId)
      .executeTakeFirst()
    return row && toDelivery(row)
  },

  /**
   * Starts a new attempt series, as `restart` does, for each of the webhook's deliveries of `events` created at or after
   * `sinceMs` that ended in one of `fromStates`. Returns how many.
   */
  async restartSince(
    db: DbOrTx,
    webhookId: string,
    selection: { sinceMs: number; fromStates: readonly DeliveryState[]; events: readonly DeliveryEvent[] },
    nowMs: number,
  ): Promise<number> {
    const result = await db
      .updateTable('webhook_deliveries')
      .set({
        state: 'pending',
        attempts: 0,
        next_attempt_at: nowMs,
        lease_expires_at: null,
        last_status_code: null,
        last_error: null,
        completed_at: null,
      })
      .where('webhook_id', '=', webhookId)
      .where('created_at', '>=', selection.sinceMs)
      .where('state', 'in', selection.fromStates)
      .where('event', 'in', selection.events)
      .executeTakeFirst()
    return Number(result.numUpdatedRows)
  },

  /**
   * Starts a new attempt series for a delivery in which no attempt is due: same id and body, attempts from zero.
   * Returns the delivery, or undefined when it was not in one of `fromStates` (it is pending or being sent).
   */
  async restart(
    db: DbOrTx,
    webhookId: string,
    id: string,
    fromStates: readonly DeliveryState[],
    nowMs: number,
  ): Promise<WebhookDelivery | undefined> {
    const row = await db
      .updateTable('webhook_deliveries')
      .set({
        state: 'pending',
        attempts: 0,
        next_attempt_at: nowMs,
        lease_expires_at: null,
        last_status_code: null,
        last_error: null,
        completed_at: null,
      })
      .where('id', '=', id)
      .where('webhook_id', '=', webhookId)
      .where('state', 'in', fromStates)
      .returningAll()
      .executeTakeFirst()
    return row && toDelivery(row)
  },
}
