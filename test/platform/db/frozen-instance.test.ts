// An instance that freezes, or loses its network, in the middle of a transaction: PostgreSQL ends its session once it
// has sat idle in the transaction for the service's timeout, so its row locks hold the other instances back no longer.
import assert from 'node:assert/strict'
import { after, before, it } from 'node:test'
import { sql } from 'kysely'
import { ServiceEvents } from '../../../src/events.js'
import type { CreatePayloadRequest } from '../../../src/features/payloads/schemas.js'
import { PayloadService } from '../../../src/features/payloads/service.js'
import { DEFAULT_PLAN_LIMITS } from '../../../src/features/projects/plans.js'
import { ProjectService } from '../../../src/features/projects/service.js'
import { usageRepository } from '../../../src/features/projects/usage-repository.js'
import { systemClock as clock } from '../../../src/platform/clock.js'
import { openStorage, type Storage } from '../../../src/platform/db/database.js'
import { isUnavailableError } from '../../../src/platform/db/unavailable.js'
import { utcMonth } from '../../../src/platform/utc.js'
import { createTestDatabase, describePostgres, type TestDatabase } from '../../support/databases.js'
import { paymentTransaction } from '../../support/fixtures.js'

const SIGN: CreatePayloadRequest = { type: 'sign', transaction: paymentTransaction() }

describePostgres('an instance frozen in the middle of a transaction', () => {
  let database: TestDatabase
  const opened: Storage[] = []
  const open = (options?: Parameters<typeof openStorage>[1]) => {
    const storage = openStorage(database.url, options)
    opened.push(storage)
    return storage
  }
  before(async () => {
    database = await createTestDatabase('postgres')
  })
  after(async () => {
    await Promise.all(opened.map((storage) => storage.close()))
    await database?.drop()
  })

  it("has its session ended by PostgreSQL after 10 s idle in a transaction, as every one of the service's sessions", async () => {
    const storage = open()
    const shown = await sql<{ idle_in_transaction_session_timeout: string }>`show idle_in_transaction_session_timeout`.execute(storage.db)
    assert.equal(shown.rows[0]?.idle_in_transaction_session_timeout, '10s')
  })

  // Without the timeout the other instance's creation waits for as long as the frozen session lives: the test's own limit.
  it("holds the other instances' creations of its project only until then, and fails (503) when it wakes up", {
    timeout: 20_000,
  }, async () => {
    const other = open()
    // The same service, its timeout shortened so that the test does not wait 10 s.
    const frozen = open({ idleInTransactionTimeoutMs: 500 })
    const { project } = await new ProjectService(other.db, clock, new ServiceEvents()).createProject({ name: 'Shop', plan: 'pro' })
    const month = utcMonth(clock.now())
    // The frozen instance was granting the project a block of the month's quota: it holds the month's row, and then
    // stops (a paused process, a partition) before its commit.
    let wake!: () => void
    let locked!: () => void
    const holding = new Promise<void>((resolve) => {
      locked = resolve
    })
    const frozenTransaction = frozen.db.transaction().execute(async (tx) => {
      await tx.insertInto('project_usage').values({ project_id: project.id, month, payload_count: 0 }).execute()
      await tx.selectFrom('project_usage').select('payload_count').where('project_id', '=', project.id).forUpdate().execute()
      locked()
      await new Promise<void>((resolve) => {
        wake = resolve
      })
      await tx.selectFrom('projects').select('id').execute()
    })
    await holding
    // Another instance creates a payload of that project: its first creation needs a block of the month's quota.
    const payloads = new PayloadService({
      db: other.db,
      dialect: other.dialect,
      clock,
      events: new ServiceEvents(),
      signingOrigin: 'http://countersign.test',
      network: 'testnet',
      limits: DEFAULT_PLAN_LIMITS,
      canSubmit: false,
    })
    const started = performance.now()
    const created = await payloads.create({ projectId: project.id, plan: 'pro' }, SIGN)
    const waitedMs = performance.now() - started
    assert.ok(waitedMs >= 400 && waitedMs < 5000, `waited ${Math.round(waitedMs)} ms`)
    assert.equal(await usageRepository.monthlyCount(other.db, project.id, month), 1)
    assert.equal((await payloads.getForProject(project.id, created.uuid)).status, 'pending')
    // The frozen instance wakes up: its transaction is gone, with nothing it wrote, and it is told so as the service
    // answers a database that went away (503), not as a bug.
    wake()
    await assert.rejects(frozenTransaction, (error) => isUnavailableError(error))
    // Its pool goes on with new connections.
    assert.equal((await frozen.db.selectFrom('projects').select('id').where('id', '=', project.id).execute()).length, 1)
  })
})
