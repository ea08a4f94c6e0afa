import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, it } from 'node:test'
import pg from 'pg'
import type { Payload } from '../../../src/features/payloads/model.js'
import { PROOF_ALREADY_USED_MESSAGE } from '../../../src/features/payloads/transitions.js'
import { describePostgres, forEachDatabase, statementsDuring } from '../../support/databases.js'
import { createPayload } from '../../support/payloads.js'
import { startTestService, type TestService } from '../../support/service.js'
import { deliveryRows, registerWebhook, SIGNED } from '../../support/webhooks.js'

/** Counts the transactions begun on the service's database while `run` runs. */
async function transactionsDuring<T>(t: TestService, run: () => Promise<T>): Promise<{ result: T; transactions: number }> {
  const db = t.service.ctx.storage.db
  const original = db.transaction
  let transactions = 0
  db.transaction = function (this: typeof db) {
    transactions++
    return original.call(this)
  } as typeof db.transaction
  try {
    return { result: await run(), transactions }
  } finally {
    db.transaction = original
  }
}

/** A project's daily counts summed over days and shards, by `status/wallet`; rows that sum to zero left out. */
async function dailyCounts(t: TestService, projectId: string): Promise<Record<string, number>> {
  const rows = await t.service.ctx.storage.db
    .selectFrom('payload_daily_counts')
    .select(['status', 'wallet_adapter'])
    .select((eb) => eb.fn.sum<number>('count').as('count'))
    .where('project_id', '=', projectId)
    .groupBy(['status', 'wallet_adapter'])
    .execute()
  return Object.fromEntries(
    rows.filter((row) => Number(row.count) !== 0).map((row) => [`${row.status}/${row.wallet_adapter}`, Number(row.count)]),
  )
}

/** A payload's status as stored. */
async function statusOf(t: TestService, uuid: string): Promise<string> {
  return (await t.service.ctx.storage.db.selectFrom('payloads').select('status').where('uuid', '=', uuid).executeTakeFirstOrThrow()).status
}

/** The Pro plan's request rate raised, so that a test's own calls are never refused. */
const RAISED_RATE = { env: { LIMITS_PRO: '{"requestsPerMinute": 100000}' } }

forEachDatabase('payload transitions, written together', (dialect) => {
  let t: TestService
  before(async () => {
    t = await startTestService(dialect, RAISED_RATE)
  })
  after(() => t.stop())

  it('writes the moves of one turn in one transaction, each answered after it, the daily counts exact', async () => {
    const { apiKey, projectId } = await t.createProject('pro')
    const uuids: string[] = []
    for (let i = 0; i < 40; i++) uuids.push(await createPayload(t, apiKey))
    const { result, transactions } = await transactionsDuring(t, () =>
      Promise.all(uuids.map((uuid, i) => t.service.ctx.payloads.reject(uuid, i % 2 === 0 ? 'gemwallet' : 'crossmark'))),
    )
    assert.equal(transactions, 1)
    assert.deepEqual(
      result.map((payload) => payload.status),
      uuids.map(() => 'rejected'),
    )
    for (const uuid of uuids) assert.equal((await t.service.ctx.payloads.getForSigning(uuid)).status, 'rejected')
    assert.deepEqual(await dailyCounts(t, projectId), { 'rejected/crossmark': 20, 'rejected/gemwallet': 20 })
  })

  it("writes a group's moves and their deliveries together: each payload moved once, each webhook given its events only", async () => {
    const { apiKey, projectId } = await t.createProject('pro')
    const other = await t.createProject('pro')
    const rejections = await registerWebhook(t, apiKey, 'http://127.0.0.1:9/rejections', ['payload.rejected'])
    const signatures = await registerWebhook(t, apiKey, 'http://127.0.0.1:9/signatures', ['payload.signed'])
    const elsewhere = await registerWebhook(t, other.apiKey, 'http://127.0.0.1:9/other')
    const rejected: string[] = []
    for (let i = 0; i < 10; i++) rejected.push(await createPayload(t, apiKey))
    const [signed, otherRejected, late] = [
      await createPayload(t, apiKey),
      await createPayload(t, other.apiKey),
      await createPayload(t, apiKey),
    ]
    const payloads = t.service.ctx.payloads
    const { result, statements } = await statementsDuring(() =>
      transactionsDuring(t, () =>
        Promise.all([
          ...rejected.map((uuid) => payloads.rejectSingleSigner(uuid, 'gemwallet')),
          payloads.rejectSingleSigner(rejected[0]!, 'crossmark'), // the same payload again: its second move finds it moved
          payloads.resolveSigned(signed!, { ...SIGNED, proofKey: `proof-${signed}` }),
          payloads.rejectSingleSigner(otherRejected!, 'gemwallet'),
          payloads.rejectSingleSigner(randomUUID(), 'gemwallet'), // no such payload
          // Submitted after the payload's expiry: its condition does not hold.
          payloads.resolveRecoveredSubmission(late!, { ...SIGNED, proofKey: `proof-${late}` }, t.clock.now() + 10 * 86_400_000),
        ]),
      ),
    )
    assert.equal(result.transactions, 1)
    assert.deepEqual(
      result.result.map((payload) => payload && `${payload.uuid} ${payload.status}`),
      [...rejected.map((uuid) => `${uuid} rejected`), undefined, `${signed} signed`, `${otherRejected} rejected`, undefined, undefined],
    )
    assert.equal(await statusOf(t, late!), 'pending')
    assert.equal((await payloads.getForSigning(rejected[0]!)).walletAdapter, 'gemwallet', 'the first move of the payload won')
    if (dialect === 'postgres') {
      const count = (pattern: RegExp) => statements.filter((text) => pattern.test(text)).length
      assert.equal(count(/update payloads set status/), 2, "one statement for every payload's first move, one for its second")
      assert.equal(count(/insert into webhook_deliveries/), 1, "one statement for every move's deliveries")
    }
    const delivered = async (webhookId: string) =>
      (await deliveryRows(t, webhookId)).map((row) => [row.payload_uuid, JSON.parse(row.body).event, JSON.parse(row.body).payload.uuid])
    assert.deepEqual((await delivered(rejections.id)).sort(), rejected.map((uuid) => [uuid, 'payload.rejected', uuid]).sort())
    assert.deepEqual(await delivered(signatures.id), [[signed, 'payload.signed', signed]])
    assert.deepEqual(await delivered(elsewhere.id), [[otherRejected, 'payload.rejected', otherRejected]])
    assert.deepEqual(await dailyCounts(t, projectId), { 'pending/': 1, 'rejected/gemwallet': 10, 'signed/xaman': 1 })
  })

  it("fails only the move whose proof another move of its group used; the group's other moves commit", async () => {
    const { apiKey, projectId } = await t.createProject('pro')
    const [first, second, rejected] = [await createPayload(t, apiKey), await createPayload(t, apiKey), await createPayload(t, apiKey)]
    const signed = { ...SIGNED, proofKey: `proof-${first}` }
    const { result: outcomes, transactions } = await transactionsDuring(t, () =>
      Promise.allSettled([
        t.service.ctx.payloads.resolveSigned(first!, signed),
        t.service.ctx.payloads.resolveSigned(second!, signed),
        t.service.ctx.payloads.reject(rejected!, 'gemwallet'),
      ]),
    )
    assert.equal(transactions, 4, 'the group, then each of its three moves on its own')
    assert.equal(outcomes[0].status, 'fulfilled')
    assert.equal(outcomes[1].status, 'rejected')
    assert.equal((outcomes[1] as PromiseRejectedResult).reason.statusCode, 409)
    assert.equal((outcomes[1] as PromiseRejectedResult).reason.message, PROOF_ALREADY_USED_MESSAGE)
    assert.equal(outcomes[2].status, 'fulfilled')
    const statuses = await Promise.all(
      [first, second, rejected].map(async (uuid) => (await t.service.ctx.payloads.getForSigning(uuid!)).status),
    )
    assert.deepEqual(statuses, ['signed', 'pending', 'rejected'])
    assert.deepEqual(await dailyCounts(t, projectId), { 'pending/': 1, 'rejected/gemwallet': 1, 'signed/xaman': 1 })
  })
})

describePostgres('moves and sweeps beside transactions that hold their rows', () => {
  let t: TestService
  before(async () => {
    t = await startTestService('postgres', RAISED_RATE)
  })
  after(() => t.stop())

  it('passes over an overdue payload whose row a transaction holds, expires the others, and does not wait for it', async () => {
    const { apiKey } = await t.createProject('pro')
    const [held, free] = [await createPayload(t, apiKey), await createPayload(t, apiKey)]
    t.clock.advance(24 * 60 * 60 * 1000)
    const db = t.service.ctx.storage.db
    let locked!: () => void
    const rowLocked = new Promise<void>((resolve) => (locked = resolve))
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    // A transaction that holds the row, as a group of moves does until its commit.
    const holder = db.transaction().execute(async (tx) => {
      await tx.selectFrom('payloads').select('uuid').where('uuid', '=', held!).forUpdate().execute()
      locked()
      await released
    })
    await rowLocked
    let holderReleased = false
    // Were the sweeper to wait for the row, it would finish only once the holder lets go.
    const timer = setTimeout(() => {
      holderReleased = true
      release()
    }, 5_000)
    const expired = await t.service.ctx.payloads.expireOverdue()
    const sweptWhileHeld = !holderReleased
    clearTimeout(timer)
    release()
    await holder
    assert.ok(sweptWhileHeld, 'the sweeper waited for the held row')
    assert.equal(expired, 1)
    assert.equal(await statusOf(t, free!), 'expired')
    assert.equal(await statusOf(t, held!), 'pending', 'the held row is left to its holder and the next sweep')
    assert.equal(await t.service.ctx.payloads.expireOverdue(), 1)
    assert.equal(await statusOf(t, held!), 'expired')
  })

  it('expires an overdue payload that another transaction only references, and that transaction does not wait', async () => {
    const { apiKey } = await t.createProject('pro')
    const referenced = await createPayload(t, apiKey)
    t.clock.advance(24 * 60 * 60 * 1000)
    const other = new pg.Client({ connectionString: t.config.databaseUrl })
    await other.connect()
    try {
      // A row that refers to the payload, its insert not yet committed: it holds the payload's key (FOR KEY SHARE).
      await other.query('begin')
      await other.query('insert into payload_proofs (proof_key, payload_uuid, created_at) values ($1, $2, 0)', [
        `proof-${referenced}`,
        referenced,
      ])
      assert.equal(await t.service.ctx.payloads.expireOverdue(), 1)
      await other.query('rollback')
    } finally {
      await other.end()
    }
    assert.equal(await statusOf(t, referenced), 'expired')
  })

  it('does not hold the row of a payload no longer pending while a group is written: a reject sent again to a signed one', async () => {
    const { apiKey } = await t.createProject('pro')
    const [signed, pending] = [await createPayload(t, apiKey), await createPayload(t, apiKey)]
    const payloads = t.service.ctx.payloads
    await payloads.resolveSigned(signed!, { ...SIGNED, proofKey: `proof-${signed}` })
    let inGroup!: () => void
    const groupWritten = new Promise<void>((resolve) => (inGroup = resolve))
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    // The group's transaction stays open, its moves made, until released.
    const removeListener = t.service.ctx.events.onTransaction('payload.changed', async () => {
      inGroup()
      await released
    })
    const other = new pg.Client({ connectionString: t.config.databaseUrl })
    await other.connect()
    try {
      const group = Promise.all([payloads.rejectSingleSigner(signed!, 'gemwallet'), payloads.rejectSingleSigner(pending!, 'gemwallet')])
      await groupWritten
      await other.query('begin')
      // Fails at once (55P03) if the group holds the row.
      await other.query('select uuid from payloads where uuid = $1 for no key update nowait', [signed])
      await assert.rejects(
        other.query('select uuid from payloads where uuid = $1 for no key update nowait', [pending]),
        (error: { code?: string }) => error.code === '55P03',
        'the moved payload is held until the commit',
      )
      await other.query('rollback')
      release()
      assert.deepEqual(
        (await group).map((payload) => payload?.status),
        [undefined, 'rejected'],
      )
    } finally {
      release()
      removeListener()
      await other.end()
    }
  })

  it("writes a group again when PostgreSQL chose it as a deadlock's victim, and both its moves commit", async () => {
    const { apiKey, projectId } = await t.createProject('pro')
    // Another session takes the group's second row, then its first: a deadlock with the group, which the group loses,
    // as it is the first to look (the server's deadlock_timeout, 1 s, against this session's 10 s; setting it needs
    // the superuser the tests connect as). On a machine so loaded that this session asks for the first row more than
    // a second after the group began to wait, the group has looked already and this session loses instead: the scene
    // is then played again on new payloads.
    let played = 0
    let scene: { moves: Payload[]; transactions: number } | undefined
    while (scene === undefined && played < 3) {
      played++
      scene = await deadlockWithGroup(await createPayload(t, apiKey), await createPayload(t, apiKey))
    }
    assert.ok(scene, 'the group was never the victim in three scenes')
    assert.deepEqual(
      scene.moves.map((payload) => payload.status),
      ['rejected', 'rejected'],
    )
    assert.equal(scene.transactions, 2, 'the group, then the group again (not its moves one by one)')
    assert.deepEqual(await dailyCounts(t, projectId), { 'rejected/gemwallet': 2 * played })
  })

  /** Rejects two payloads in one group while another session deadlocks with it; undefined when that session lost. */
  async function deadlockWithGroup(a: string, b: string): Promise<{ moves: Payload[]; transactions: number } | undefined> {
    const [first, second] = [a, b].sort() as [string, string]
    const other = new pg.Client({ connectionString: t.config.databaseUrl })
    await other.connect()
    try {
      await other.query("set deadlock_timeout = '10s'")
      await other.query('begin')
      await other.query('select uuid from payloads where uuid = $1 for update', [second])
      let otherLost = false
      const { result: moves, transactions } = await transactionsDuring(t, async () => {
        const group = Promise.all([first, second].map((uuid) => t.service.ctx.payloads.reject(uuid, 'gemwallet')))
        await waitForLockWaits(other, 1) // the group holds the first row and waits for the second
        try {
          await other.query('select uuid from payloads where uuid = $1 for update', [first]) // granted once the group gave way
          await other.query('commit')
        } catch (error) {
          if ((error as { code?: string }).code !== '40P01') throw error
          otherLost = true
          await other.query('rollback')
        }
        return group
      })
      return otherLost ? undefined : { moves, transactions }
    } finally {
      await other.end()
    }
  }
})

/** Waits until `count` sessions of the database wait for a row lock. */
async function waitForLockWaits(client: pg.Client, count: number): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt++) {
    const { rows } = await client.query(
      "select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
    )
    if (rows[0].waiting >= count) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`no ${count} sessions waited for a lock within 5 s`)
}
