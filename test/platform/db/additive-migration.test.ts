// A rolling deploy (docs/deployment.md): the new version's migration adds a nullable column while instances of the old
// version go on serving on connections where their hot queries are already prepared. PostgreSQL refuses to run a
// prepared statement whose result type changed ("cached plan must not change result type"), which a `*` over the
// table would be: every hot query names its columns (schema.ts, COLUMNS), and these go on running.
import assert from 'node:assert/strict'
import { after, before, it } from 'node:test'
import { sql } from 'kysely'
import { webhookDeliveriesRepository } from '../../../src/features/webhooks/deliveries-repository.js'
import { openStorage, type Storage } from '../../../src/platform/db/database.js'
import { claimDueRows } from '../../../src/platform/db/outbox.js'
import { COLUMNS } from '../../../src/platform/db/schema.js'
import { createTestDatabase, forEachDatabase, type TestDatabase } from '../../support/databases.js'
import { payloadBodies } from '../../support/fixtures.js'
import { readPayload } from '../../support/payloads.js'
import { bearer, startTestService, type TestService } from '../../support/service.js'

const TABLES_READ_WHOLE = Object.keys(COLUMNS) as (keyof typeof COLUMNS)[]

forEachDatabase('an additive migration under instances of the version before', (dialect) => {
  let database: TestDatabase
  let t: TestService
  let newVersion: Storage

  before(async () => {
    database = await createTestDatabase(dialect)
    t = await startTestService(dialect, { databaseUrl: database.url })
    newVersion = openStorage(database.url)
  })
  after(async () => {
    await t.stop()
    await newVersion.close()
    await database.drop()
  })

  it('names every column of each table read whole, as the migrations made it', async () => {
    for (const table of TABLES_READ_WHOLE) {
      const { rows } = await sql<{ name: string }>`${
        dialect === 'postgres'
          ? sql`select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = ${table}`
          : sql`select name from pragma_table_info(${table})`
      }`.execute(newVersion.db)
      assert.deepEqual([...COLUMNS[table]].sort(), rows.map((row) => row.name).sort(), table)
    }
  })

  it('goes on reading and rejecting payloads, replaying Idempotency-Keys and claiming outbox rows', async () => {
    const { apiKey } = await t.createProject('pro')
    const create = (key: string) =>
      t.inject({
        method: 'POST',
        url: '/api/v1/payloads',
        headers: { ...bearer(apiKey), 'idempotency-key': key },
        payload: payloadBodies.sign,
      })
    const reject = (uuid: string) => t.inject({ method: 'POST', url: `/api/v1/sign/${uuid}/reject`, payload: {} })
    const { db } = t.service.ctx.storage
    // One email due, claimed whole; the other outbox tables claimed empty, on their own prepared statements.
    const claims = async (emailId: string) => {
      const nowMs = t.clock.now()
      await db
        .insertInto('emails')
        .values({
          id: emailId,
          dedupe_key: emailId,
          kind: 'test',
          project_id: null,
          to_address: 'ops@example.com',
          subject: 'Subject',
          body_text: 'Body',
          state: 'pending',
          attempts: 0,
          next_attempt_at: nowMs,
          lease_expires_at: null,
          last_error: null,
          created_at: nowMs,
          sent_at: null,
        })
        .execute()
      const leaseExpiresAtMs = nowMs + 60_000
      const emails = await claimDueRows(db, dialect, 'emails', { nowMs, leaseExpiresAtMs, limit: 10 })
      assert.deepEqual(
        emails.map((row) => [row.id, row.state, row.lease_expires_at, row.subject, row.created_at]),
        [[emailId, 'sending', leaseExpiresAtMs, 'Subject', nowMs]],
      )
      await claimDueRows(db, dialect, 'transaction_follows', { nowMs, leaseExpiresAtMs, limit: 10 })
      await webhookDeliveriesRepository.claimDue(db, dialect, { nowMs, leaseExpiresAtMs, limit: 10, excludeWebhookIds: [] })
    }
    const serve = async (key: string) => {
      const created = await create(key)
      assert.equal(created.statusCode, 201, created.body)
      const { uuid } = created.json()
      assert.equal((await readPayload(t, apiKey, uuid)).status, 'pending')
      assert.equal((await reject(uuid)).statusCode, 200)
      assert.equal((await readPayload(t, apiKey, uuid)).status, 'rejected')
      const replayed = await create(key)
      assert.deepEqual([replayed.statusCode, replayed.headers['idempotent-replayed'], replayed.json().uuid], [201, 'true', uuid])
      await claims(`em_${key}`)
    }

    // Every statement runs, and is prepared, before the migration.
    await serve('order-1')

    // The new version's instance migrates, on its own connection, as deployment.md allows: on each table read whole a
    // nullable column, a column with a default, and an index.
    for (const table of TABLES_READ_WHOLE) {
      await sql`alter table ${sql.table(table)} add column added_by_the_next_version text`.execute(newVersion.db)
      await sql`alter table ${sql.table(table)} add column added_with_a_default integer not null default 0`.execute(newVersion.db)
      await sql`create index ${sql.id(`${table}_next_version`)} on ${sql.table(table)} (added_by_the_next_version)`.execute(newVersion.db)
    }

    await serve('order-2')
  })
})
