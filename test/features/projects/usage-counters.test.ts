// The counters out of hot rows stay exact: monthly limits under concurrent creations on several instances (each with its
// own connection pool and group commit), quota left in one shard usable by another, one usage warning, and analytics
// equal to the payloads themselves after concurrent creations and transitions.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, it, mock } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import { ServiceEvents } from '../../../src/events.js'
import { payloadsRepository } from '../../../src/features/payloads/repository.js'
import type { CreatePayloadRequest } from '../../../src/features/payloads/schemas.js'
import { PayloadService } from '../../../src/features/payloads/service.js'
import { analyticsRepository } from '../../../src/features/projects/analytics-repository.js'
import { DEFAULT_PLAN_LIMITS } from '../../../src/features/projects/plans.js'
import { ProjectService } from '../../../src/features/projects/service.js'
import { COUNTER_SHARDS, usageRepository } from '../../../src/features/projects/usage-repository.js'
import { ManualClock } from '../../../src/platform/clock.js'
import { openStorage, type Storage } from '../../../src/platform/db/database.js'
import { idempotencyKeysRepository } from '../../../src/platform/db/idempotency-keys-repository.js'
import { migrateUpTo } from '../../../src/platform/db/migrations.js'
import { utcMonth } from '../../../src/platform/utc.js'
import { createTestDatabase, forEachDatabase, type TestDatabase } from '../../support/databases.js'
import { paymentTransaction } from '../../support/fixtures.js'

const NOW = Date.UTC(2026, 4, 14, 12, 0, 0)
const MONTH = utcMonth(NOW)
const SIGN: CreatePayloadRequest = { type: 'sign', transaction: paymentTransaction() }

forEachDatabase('usage counters', (dialect) => {
  // PostgreSQL runs three instances, each its own pool; SQLite is one process's database.
  const instanceCount = dialect === 'postgres' ? 3 : 1
  let database: TestDatabase
  const storages: Storage[] = []
  const clock = new ManualClock(NOW)
  /** Warnings emitted by the instances' payload services since the last call to services(). */
  let warned = 0
  /** Creations written in one statement and in a transaction since the last call to services(). */
  let written = { 'one statement': 0, transaction: 0 }
  /** A payload service on each of `on` (every instance's storage unless given), counting into warned and written. */
  const services = (monthlyPayloads: number, on: Storage[] = storages) => {
    warned = 0
    written = { 'one statement': 0, transaction: 0 }
    return on.map((storage) => {
      const events = new ServiceEvents()
      events.onTransaction('usage.warning', async () => void warned++)
      return new PayloadService({
        db: storage.db,
        dialect: storage.dialect,
        clock,
        events,
        signingOrigin: 'http://countersign.test',
        network: 'testnet',
        limits: { ...DEFAULT_PLAN_LIMITS, pro: { ...DEFAULT_PLAN_LIMITS.pro, monthlyPayloads } },
        canSubmit: false,
        onCreationsWritten: (way, count) => {
          written[way] += count
        },
      })
    })
  }
  const db = () => storages[0]!.db
  /** The count each of the project's usage warnings recorded. */
  const warningCounts = async (projectId: string, on = db()) =>
    (await on.selectFrom('usage_warnings').select('payload_count').where('project_id', '=', projectId).execute()).map((warning) =>
      Number(warning.payload_count),
    )
  const newProject = async () =>
    (await new ProjectService(db(), clock, new ServiceEvents()).createProject({ name: 'Shop', plan: 'pro' })).project.id

  /** Fires `count` creations at once, spread over the instances; returns how many were created and how many refused. */
  async function createAtOnce(instances: PayloadService[], projectId: string, count: number) {
    const results = await Promise.allSettled(
      Array.from({ length: count }, (_, i) => instances[i % instances.length]!.create({ projectId, plan: 'pro' }, SIGN)),
    )
    for (const r of results) {
      if (r.status === 'rejected') assert.equal((r.reason as { statusCode?: number }).statusCode, 403, String(r.reason))
    }
    return {
      created: results.filter((r) => r.status === 'fulfilled').length,
      refused: results.filter((r) => r.status === 'rejected').length,
    }
  }

  const payloadRows = async (projectId: string) =>
    Number(
      (
        await db()
          .selectFrom('payloads')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('project_id', '=', projectId)
          .executeTakeFirstOrThrow()
      ).n,
    )

  before(async () => {
    database = await createTestDatabase(dialect)
    for (let i = 0; i < instanceCount; i++) storages.push(openStorage(database.url))
  })
  after(async () => {
    await Promise.all(storages.map((s) => s.close()))
    await database?.drop()
  })

  it('of many concurrent creations at the limit on every instance, exactly the limit is created', async () => {
    for (const limit of [37, 1000]) {
      const projectId = await newProject()
      const instances = services(limit)
      const { created, refused } = await createAtOnce(instances, projectId, limit + 150)
      assert.equal(created, limit)
      assert.equal(refused, 150)
      assert.equal(await payloadRows(projectId), limit)
      assert.equal(await usageRepository.monthlyCount(db(), projectId, MONTH), limit)
      // Full: another round on every instance creates nothing.
      assert.deepEqual(await createAtOnce(instances, projectId, 2 * instances.length), { created: 0, refused: 2 * instances.length })
      assert.equal(await payloadRows(projectId), limit)
    }
  })

  it('writes creations in one statement on PostgreSQL, externalIds included, and in a transaction when one is taken', async () => {
    const projectId = await newProject()
    const [instance] = services(1_000_000)
    // The first creations on a shard take its block of quota in a transaction; later ones fit the shard's block.
    for (let round = 0; round < 60; round++) {
      await Promise.all(Array.from({ length: 10 }, () => instance!.create({ projectId, plan: 'pro' }, SIGN)))
    }
    const plain = written
    if (dialect === 'postgres') assert.ok(plain['one statement'] >= 300, `written: ${JSON.stringify(plain)}`)
    else assert.deepEqual(plain, { 'one statement': 0, transaction: 600 })
    written = { 'one statement': 0, transaction: 0 }
    /** The uuid of the payload created with each externalId. */
    const holders = new Map<string, string>()
    /** Creates `ids` at once, spread over `instances`; returns how many were created, each refusal checked. */
    const createWithExternalIds = async (instances: PayloadService[], ids: string[]) => {
      const results = await Promise.allSettled(
        ids.map((externalId, i) =>
          instances[i % instances.length]!.create({ projectId, plan: 'pro' }, { ...SIGN, options: { externalId } }),
        ),
      )
      const created = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))
      for (const payload of created) {
        assert.ok(!holders.has(payload.externalId!), `${payload.externalId} was created twice`)
        holders.set(payload.externalId!, payload.uuid)
      }
      for (const [i, result] of results.entries()) {
        if (result.status === 'fulfilled') continue
        // The repeat is told which payload it repeats.
        const refusal = result.reason as { statusCode?: number; fields?: Record<string, string> }
        assert.equal(refusal.statusCode, 409, String(result.reason))
        assert.equal(refusal.fields?.uuid, holders.get(ids[i]!))
      }
      return created.length
    }
    const ids = (first: number, count = 10) => Array.from({ length: count }, (_, i) => `order-${first + i}`)
    // A wave whose shard has no block of quota yet goes in a transaction; the next waves find one.
    let waves = 0
    do {
      assert.equal(await createWithExternalIds([instance!], ids(10 * waves)), 10)
      waves++
    } while (dialect === 'postgres' && written['one statement'] === 0 && waves < 20)
    if (dialect === 'postgres') assert.ok(written['one statement'] >= 10, `written: ${JSON.stringify(written)}`)
    let created = 600 + 10 * waves
    assert.equal(await payloadRows(projectId), created)
    // The last wave's ids and five new ones: the taken ids make the group's one statement write nothing, and the
    // creations are written again one by one, the five new ones created and the five repeats refused.
    assert.equal(await createWithExternalIds([instance!], ids(10 * waves - 5)), 5)
    created += 5
    // The same new id twice in one group: one created, the other refused.
    assert.equal(await createWithExternalIds([instance!], ['twice', 'twice', ...ids(1000, 4)]), 5)
    created += 5
    // Every instance at once with the same new ids: on PostgreSQL their statements race, and the one that finds the id
    // taken after its snapshot is refused by the unique index, writes nothing, and goes to the transaction.
    for (let round = 0; round < 10; round++) {
      const raced = ids(2000 + 10 * round, 3)
      assert.equal(await createWithExternalIds(services(1_000_000), [...raced, ...raced, ...raced].sort()), 3)
      created += 3
    }
    if (dialect === 'postgres') {
      // A payload with the id is written by another connection and committed while the group's statement waits on the
      // unique index: the statement fails as a whole, and the transaction refuses the creation, naming that payload.
      const someone = await instance!.getForProject(projectId, holders.get('order-0')!)
      const held = { ...someone, uuid: randomUUID(), externalId: 'held' }
      const answered = await db()
        .transaction()
        .execute(async (tx) => {
          assert.ok(await payloadsRepository.insert(tx, held))
          const answer = instance!.create({ projectId, plan: 'pro' }, { ...SIGN, options: { externalId: 'held' } }).then(
            () => assert.fail('created over a payload with the same externalId'),
            (error: unknown) => error as { statusCode?: number; fields?: Record<string, string> },
          )
          await sleep(300)
          // Wrapped, so that the commit does not wait for the answer, which waits for the commit.
          return { answer }
        })
      const refusal = await answered.answer
      assert.equal(refusal.statusCode, 409, String(refusal))
      assert.equal(refusal.fields?.uuid, held.uuid)
    }
    assert.equal(await payloadRows(projectId), created + (dialect === 'postgres' ? 1 : 0))
    assert.equal(await usageRepository.monthlyCount(db(), projectId, MONTH), created)
  })

  it('keeps each Idempotency-Key response with its payload, in one statement on PostgreSQL; a creation whose key was taken over writes nothing', async () => {
    const projectId = await newProject()
    const [instance] = services(1_000_000)
    let nextKey = 0
    /** Claims `count` new keys at `nowMs`, as the idempotency hook does; returns each key and its claim's token. */
    const claim = async (count: number, nowMs = NOW) => {
      const claims = Array.from({ length: count }, () => ({ key: `key-${nextKey++}`, claimToken: randomUUID() }))
      for (const { key, claimToken } of claims) {
        const held = await idempotencyKeysRepository.claim(db(), {
          projectId,
          key,
          fingerprint: 'f',
          claimToken,
          nowMs,
          leaseMs: 60_000,
          keepMs: 24 * 60 * 60 * 1000,
        })
        assert.equal(held, true)
      }
      return claims
    }
    /** Creates a payload for each claim at once, keeping `kept <uuid>` as its response; returns each one's outcome. */
    const createKeeping = (claims: { key: string; claimToken: string }[]) =>
      Promise.allSettled(
        claims.map(({ key, claimToken }) =>
          instance!.create({ projectId, plan: 'pro' }, SIGN, (payload) => ({
            projectId,
            key,
            claimToken,
            statusCode: 201,
            responseSealed: `kept ${payload.uuid}`,
          })),
        ),
      )
    const keyRow = (key: string) =>
      db().selectFrom('idempotency_keys').selectAll().where('project_id', '=', projectId).where('key', '=', key).executeTakeFirstOrThrow()
    let created = 0
    // A shard's first group takes its block of quota in a transaction; the waves go on until one statement writes some.
    for (let wave = 0; wave === 0 || (dialect === 'postgres' && wave < 40 && written['one statement'] < 30); wave++) {
      const claims = await claim(10)
      const results = await createKeeping(claims)
      for (const [i, result] of results.entries()) {
        assert.equal(result.status, 'fulfilled', String((result as PromiseRejectedResult).reason))
        const row = await keyRow(claims[i]!.key)
        assert.equal(row.response_sealed, `kept ${(result as PromiseFulfilledResult<{ uuid: string }>).value.uuid}`)
        assert.equal(row.status_code, 201)
        assert.equal(row.lease_expires_at, null)
      }
      created += claims.length
    }
    if (dialect === 'postgres') assert.ok(written['one statement'] >= 30, `written: ${JSON.stringify(written)}`)

    // One request's claim ran out while it was held up (its lease is a minute) and another request took the key over.
    // Its creation is written in a group with nine others: it is refused with 409 and writes nothing; the others are created.
    for (let round = 0; round < 5; round++) {
      const [stale] = await claim(1, NOW - 120_000)
      const thief = randomUUID()
      const takeover = { projectId, key: stale!.key, fingerprint: 'f', claimToken: thief, nowMs: NOW, leaseMs: 60_000, keepMs: 1 }
      assert.equal(await idempotencyKeysRepository.claim(db(), takeover), true)
      const claims = await claim(9)
      const results = await createKeeping([...claims.slice(0, 4), stale!, ...claims.slice(4)])
      const refused = results[4]!
      assert.equal(refused.status, 'rejected', 'created under a key another request holds')
      assert.equal((refused.reason as { statusCode?: number }).statusCode, 409, String(refused.reason))
      assert.equal(results.filter((result) => result.status === 'fulfilled').length, 9)
      const row = await keyRow(stale!.key)
      assert.equal(row.claim_token, thief)
      assert.equal(row.response_sealed, null)
      created += 9
    }
    if (dialect === 'postgres') {
      // The takeover commits while the group's statement waits for the claim's row: the statement finds the claim gone
      // and writes nothing. Were the claim only read, not locked, the statement would keep its response over the new
      // holder's claim and create the payload.
      const [late] = await claim(1, NOW - 120_000)
      const thief = randomUUID()
      const takeover = { projectId, key: late!.key, fingerprint: 'f', claimToken: thief, nowMs: NOW, leaseMs: 60_000, keepMs: 1 }
      const answered = await db()
        .transaction()
        .execute(async (tx) => {
          assert.equal(await idempotencyKeysRepository.claim(tx, takeover), true)
          const answer = createKeeping([late!]).then(([result]) => result!)
          await sleep(300)
          // Wrapped, so that the commit does not wait for the answer, which waits for the commit.
          return { answer }
        })
      const result = await answered.answer
      assert.equal(result.status, 'rejected', 'created under a key another request took over')
      assert.equal((result.reason as { statusCode?: number }).statusCode, 409, String(result.reason))
      const row = await keyRow(late!.key)
      assert.equal(row.claim_token, thief)
      assert.equal(row.response_sealed, null)
    }
    assert.equal(await payloadRows(projectId), created)
    assert.equal(await usageRepository.monthlyCount(db(), projectId, MONTH), created)
  })

  it('writes every character of creations written together as given, quotes, backslashes, braces and commas included', async () => {
    const projectId = await newProject()
    const [instance] = services(1_000_000)
    // Each text is what an array's literal form would break on, were it not escaped; a shard's first group takes its
    // block in a transaction, so the waves go on until one statement has written some of them.
    const awkward = ['"quoted", {braced}', 'back\\slash \\" and \\\\', 'NULL', '', ' spaced ', "it's; -- ", '{"a":[1,2]}', 'é 😀 ∑']
    const requests: CreatePayloadRequest[] = awkward.map((text, i) => ({
      type: 'signMessage',
      message: text === '' ? 'x' : text,
      // Every other creation leaves the optional fields out: their columns hold NULL beside text in one group.
      options:
        i % 2 === 0
          ? {
              customInstructions: text,
              returnUrl: `https://shop.example/back?n=${i}&q=%22${encodeURIComponent(text)}`,
              metadata: { text, list: [text, null, i], nested: { '"key"': text } },
            }
          : {},
    }))
    for (let wave = 0; wave === 0 || (dialect === 'postgres' && wave < 40 && written['one statement'] < 2 * requests.length); wave++) {
      const created = await Promise.all(requests.map((request) => instance!.create({ projectId, plan: 'pro' }, request)))
      for (const [i, payload] of created.entries()) {
        const stored = await instance!.getForProject(projectId, payload.uuid)
        const options = requests[i]!.options!
        assert.equal(stored.message, requests[i]!.message)
        assert.equal(stored.customInstructions, options.customInstructions ?? null)
        assert.equal(stored.returnUrl, options.returnUrl ?? null)
        assert.deepEqual(stored.metadata, options.metadata ?? null)
        assert.equal(stored.expiresAtMs, payload.expiresAtMs)
        assert.equal(stored.createdAtMs, NOW)
        assert.equal(stored.externalId, null)
      }
    }
    if (dialect === 'postgres') assert.ok(written['one statement'] >= 2 * requests.length, `written: ${JSON.stringify(written)}`)
  })

  it('of creations in small waves on every instance up to the limit, exactly the limit is created', async () => {
    // Small groups fit their shard's block, so on PostgreSQL most go in one statement: the limit holds on that path too.
    const projectId = await newProject()
    const instances = services(1000)
    let created = 0
    let refused = 0
    while (refused < 30) {
      const wave = await createAtOnce(instances, projectId, 10)
      created += wave.created
      refused += wave.refused
    }
    assert.equal(created, 1000)
    assert.equal(await payloadRows(projectId), 1000)
    assert.equal(await usageRepository.monthlyCount(db(), projectId, MONTH), 1000)
    if (dialect === 'postgres') assert.ok(written['one statement'] > 100, `written: ${JSON.stringify(written)}`)
  })

  it('counts in shards within the quota granted to them, and a shard takes what another left over at the end of the month', async () => {
    const projectId = await newProject()
    const quota = { projectId, month: MONTH, limit: 6400 }
    const reserve = (count: number, shard: number) =>
      db()
        .transaction()
        .execute(async (tx) => (await usageRepository.reserveMonthlyPayloads(tx, dialect, quota, count, shard)).fit)
    // Shard 0 takes a block bigger than its one payload: a share of the month, so the next ones need no grant.
    assert.equal(await reserve(1, 0), 1)
    const grants = () =>
      db().selectFrom('usage_shards').select(['shard', 'granted', 'used']).where('project_id', '=', projectId).orderBy('shard').execute()
    const [first] = await grants()
    assert.ok(first!.granted > 1 && first!.granted < 6400, `block of ${first!.granted}`)
    // The last shard asks for all the rest: the month's remaining quota plus shard 0's unused part.
    const last = COUNTER_SHARDS - 1
    assert.equal(await reserve(6399, last), 6399)
    assert.equal(await reserve(1, 0), 0)
    assert.equal(await reserve(1, 3), 0)
    const rows = await grants()
    assert.equal(
      rows.reduce((sum, row) => sum + Number(row.used), 0),
      6400,
    )
    assert.ok(rows.every((row) => Number(row.used) <= Number(row.granted)))
    const month = await db()
      .selectFrom('project_usage')
      .select('payload_count')
      .where('project_id', '=', projectId)
      .executeTakeFirstOrThrow()
    assert.equal(Number(month.payload_count), 6400)
    assert.equal(await usageRepository.monthlyCount(db(), projectId, MONTH), 6400)
  })

  it('applies a lower limit at once although the shards hold quota granted under the higher one, and a higher one again', async () => {
    const projectId = await newProject()
    assert.deepEqual(await createAtOnce(services(6400), projectId, 50), { created: 50, refused: 0 })
    const granted = await db()
      .selectFrom('project_usage')
      .select('payload_count')
      .where('project_id', '=', projectId)
      .executeTakeFirstOrThrow()
    assert.ok(Number(granted.payload_count) > 50, `blocks of more than one payload were granted (${granted.payload_count})`)
    // The plan changed: a limit below the month's count refuses every creation, on every instance.
    assert.deepEqual(await createAtOnce(services(30), projectId, 12), { created: 0, refused: 12 })
    // Raised to 60: exactly 10 more.
    assert.deepEqual(await createAtOnce(services(60), projectId, 25), { created: 10, refused: 15 })
    assert.equal(await payloadRows(projectId), 60)
    assert.equal(await usageRepository.monthlyCount(db(), projectId, MONTH), 60)
  })

  it('records one usage warning when concurrent creations on several instances cross 80% together', async () => {
    const projectId = await newProject()
    const instances = services(10)
    assert.deepEqual(await createAtOnce(instances, projectId, 8), { created: 8, refused: 0 })
    assert.deepEqual(await warningCounts(projectId), [8])
    assert.equal(warned, 1)
  })

  it("reads the month's count after a group only once the month's grants reach the warning's threshold, and warns at it exactly", async () => {
    const projectId = await newProject()
    const instances = services(1000)
    const counted = mock.method(usageRepository, 'monthlyCount')
    try {
      // A shard holds at most a block of 15 (1,000 / 64) it has not used: after 500 payloads the month's grants are
      // at most 740, below the threshold of 800, so no count can have reached it and none is read.
      for (let wave = 0; wave < 50; wave++) assert.deepEqual(await createAtOnce(instances, projectId, 10), { created: 10, refused: 0 })
      assert.equal(counted.mock.callCount(), 0)
      for (let wave = 50; wave < 85; wave++) assert.deepEqual(await createAtOnce(instances, projectId, 10), { created: 10, refused: 0 })
      assert.ok(counted.mock.callCount() > 0)
    } finally {
      counted.mock.restore()
    }
    // The wave that reached 800 was answered after its last commit's count: that count is the warning's.
    assert.deepEqual(await warningCounts(projectId), [800])
    assert.equal(warned, 1)
  })

  it("warns at 80% on shards whose rows an earlier version wrote and granted, which do not hold the month's grants", async () => {
    const older = await createTestDatabase(dialect, { empty: true })
    const storage = openStorage(older.url)
    try {
      await migrateUpTo(storage, '0011_submission_intents')
      const { project } = await new ProjectService(storage.db, clock, new ServiceEvents()).createProject({ name: 'Shop', plan: 'pro' })
      // The version before: the month all granted (1,000), 799 created, every shard with quota left; its rows have no
      // month_granted, and so hold 0 once migrated.
      await storage.db.insertInto('project_usage').values({ project_id: project.id, month: MONTH, payload_count: 1000 }).execute()
      const shards =
        dialect === 'sqlite'
          ? [{ shard: 0, granted: 1000, used: 799 }]
          : Array.from({ length: COUNTER_SHARDS }, (_, shard) => {
              const granted = shard < 8 ? 62 : 63
              return { shard, granted, used: granted - (shard === 0 ? 6 : 13) }
            })
      assert.equal(
        shards.reduce((sum, row) => sum + row.used, 0),
        799,
      )
      await sql`insert into usage_shards (project_id, month, shard, granted, used) values ${sql.join(
        shards.map(({ shard, granted, used }) => sql`(${project.id}, ${MONTH}, ${shard}, ${granted}, ${used})`),
      )}`.execute(storage.db)
      assert.deepEqual(await migrateUpTo(storage, '0012_usage_month_granted'), ['0012_usage_month_granted'])
      const [instance] = services(1000, [storage])
      // The 800th payload, counted on a shard with quota (in one statement on PostgreSQL): its row says 0 granted,
      // the month's row 1,000; the count after the commit is read and warned of.
      await instance!.create({ projectId: project.id, plan: 'pro' }, SIGN)
      assert.equal(await usageRepository.monthlyCount(storage.db, project.id, MONTH), 800)
      assert.deepEqual(await warningCounts(project.id, storage.db), [800])
      assert.equal(warned, 1)
    } finally {
      await storage.close()
      await older.drop()
    }
  })

  if (dialect === 'postgres') {
    it("warns when a grant commits while a group's one statement waits for its shard: the count that crosses 80% is read", async () => {
      const projectId = await newProject()
      const [instance] = services(100_000)
      // Every shard has one payload's quota left: 79,840 granted (below the threshold of 80,000), 79,824 created.
      await db().insertInto('project_usage').values({ project_id: projectId, month: MONTH, payload_count: 79_840 }).execute()
      await db()
        .insertInto('usage_shards')
        .values(
          Array.from({ length: COUNTER_SHARDS }, (_, shard) => ({
            project_id: projectId,
            month: MONTH,
            shard,
            granted: 4990,
            used: 4989,
            month_granted: 79_840,
          })),
        )
        .execute()
      const quota = { projectId, month: MONTH, limit: 100_000 }
      // Another instance's group of 175 takes a block of 315 for shard 0 (the month's grants: 80,155; shard 0 keeps 141
      // of it) and holds every shard's row until its commit: 79,999 created. Meanwhile this instance's one creation, in
      // one statement, waits for its shard's row, whichever it drew. When the grant commits, the statement reads that
      // row again, the grant's 80,155 with it, so the count after its commit (80,000) is read and warned of. Read from
      // the month's row as the statement's snapshot had it (79,840), the creation would take the count for below the
      // threshold and not read it, and the other instance read 79,999 before this commit.
      const answered = await db()
        .transaction()
        .execute(async (tx) => {
          assert.deepEqual(await usageRepository.reserveMonthlyPayloads(tx, dialect, quota, 175, 0), { fit: 175, monthGranted: 80_155 })
          const answer = instance!.create({ projectId, plan: 'pro' }, SIGN)
          await sleep(300)
          // Wrapped, so that the commit does not wait for the answer, which waits for the commit.
          return { answer }
        })
      await answered.answer
      assert.deepEqual(written, { 'one statement': 1, transaction: 0 })
      assert.equal(await usageRepository.monthlyCount(db(), projectId, MONTH), 80_000)
      assert.deepEqual(await warningCounts(projectId), [80_000])
      assert.equal(warned, 1)
    })
  }

  it('keeps analytics equal to the payloads after concurrent creations and transitions on every instance', async () => {
    const projectId = await newProject()
    const instances = services(1_000_000)
    const created = await Promise.all(
      Array.from({ length: 90 }, (_, i) => instances[i % instances.length]!.create({ projectId, plan: 'pro' }, SIGN)),
    )
    await Promise.all(
      created.map((payload, i) => {
        const instance = instances[(i + 1) % instances.length]!
        if (i % 3 === 0) return instance.reject(payload.uuid, 'xaman')
        if (i % 3 === 1)
          return instance.resolveSigned(payload.uuid, {
            walletAdapter: i % 2 ? 'gem' : 'crossmark',
            signerAddress: 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe',
          })
        return i % 2 ? instance.cancel(projectId, payload.uuid) : Promise.resolve()
      }),
    )
    const actual = await db()
      .selectFrom('payloads')
      .select((eb) => ['status', eb.fn.coalesce('wallet_adapter', eb.val('')).as('wallet'), eb.fn.countAll<number>().as('n')])
      .where('project_id', '=', projectId)
      .groupBy(['status', 'wallet'])
      .execute()
    const day = new Date(NOW).toISOString().slice(0, 10)
    const counted = (await analyticsRepository.dailyCounts(db(), projectId, day, day)).filter((row) => Number(row.count) !== 0)
    const key = (status: string, wallet: string) => `${status}/${wallet}`
    assert.deepEqual(
      new Map(counted.map((row) => [key(row.status, row.walletAdapter), Number(row.count)])),
      new Map(actual.map((row) => [key(row.status, String(row.wallet)), Number(row.n)])),
    )
  })
})
