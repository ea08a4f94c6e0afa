// Idempotency-Key claims arriving together are written with one commit (on PostgreSQL, one statement), and each request
// still gets what a claim of its own would give it (the key, the holder's row, or a takeover).
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { ServiceEvents } from '../../../src/events.js'
import { ProjectService } from '../../../src/features/projects/service.js'
import { ManualClock } from '../../../src/platform/clock.js'
import { openStorage, type Storage } from '../../../src/platform/db/database.js'
import {
  type IdempotencyClaim,
  IdempotencyClaims,
  idempotencyKeysRepository,
} from '../../../src/platform/db/idempotency-keys-repository.js'
import { createTestDatabase, describePostgres, forEachDatabase, statementsDuring, type TestDatabase } from '../../support/databases.js'

const NOW = Date.UTC(2026, 4, 14, 12, 0, 0)
const LEASE_MS = 60_000

forEachDatabase('Idempotency-Key claims', (dialect) => {
  let database: TestDatabase
  let storage: Storage
  before(async () => {
    database = await createTestDatabase(dialect)
    storage = openStorage(database.url)
  })
  after(async () => {
    await storage?.close()
    await database?.drop()
  })

  const newProject = async () =>
    (await new ProjectService(storage.db, new ManualClock(NOW), new ServiceEvents()).createProject({ name: 'Shop', plan: 'pro' })).project
      .id

  it('claims keys that arrive together in one statement on PostgreSQL, each answered as if it were alone', async () => {
    const projectId = await newProject()
    const claims = new IdempotencyClaims(storage.db, dialect)
    const claimOf = (key: string, fingerprint: string, nowMs = NOW): IdempotencyClaim => ({
      projectId,
      key,
      fingerprint,
      claimToken: randomUUID(),
      nowMs,
      leaseMs: LEASE_MS,
      keepMs: 24 * 60 * 60 * 1000,
    })
    // Held before the group: one by a request still running, one by a request whose lease has run out.
    assert.equal(await claims.claim(claimOf('running', 'first')), true)
    assert.equal(await claims.claim(claimOf('abandoned', 'first', NOW - 2 * LEASE_MS)), true)

    const fresh = Array.from({ length: 20 }, (_, i) => claimOf(`fresh-${i}`, 'f'))
    const twice = [claimOf('twice', 'one'), claimOf('twice', 'other')]
    const group = [...fresh, ...twice, claimOf('running', 'second'), claimOf('abandoned', 'second')]
    const { result: results, statements } = await statementsDuring(() => Promise.all(group.map((claim) => claims.claim(claim))))
    const answer = (i: number) => {
      const result = results[i]!
      return result === true ? 'held' : `holder ${result.fingerprint}`
    }
    for (let i = 0; i < fresh.length; i++) assert.equal(answer(i), 'held', fresh[i]!.key)
    // One of the two requests with one key holds it; the other is told of it, as a repeat is.
    const [first, second] = [answer(20), answer(21)].sort()
    assert.equal(first, 'held')
    assert.match(second!, /^holder (one|other)$/)
    assert.equal(answer(22), 'holder first', 'a key held by a running request stays its')
    assert.equal(answer(23), 'held', 'a key whose lease ran out is taken over')

    const rows = await storage.db.selectFrom('idempotency_keys').selectAll().where('project_id', '=', projectId).execute()
    assert.equal(rows.length, 20 + 3)
    const tokenOf = (key: string) => rows.find((row) => row.key === key)?.claim_token
    for (const claim of fresh) assert.equal(tokenOf(claim.key), claim.claimToken)
    assert.equal(tokenOf('abandoned'), group[23]!.claimToken)
    const twiceHolder = results[20] === true ? twice[0]! : twice[1]!
    assert.equal(tokenOf('twice'), twiceHolder.claimToken)
    if (dialect === 'postgres') {
      const inserts = statements.filter((text) => /^\s*insert into "?idempotency_keys/.test(text))
      assert.equal(inserts.length, 1, inserts.join('\n'))
      assert.match(inserts[0]!, /unnest/)
    }
  })
})

// Two instances, each with its own pool: SQLite has one connection, so its groups run one at a time.
describePostgres('Idempotency-Key claims on two instances', () => {
  let database: TestDatabase
  let one: Storage
  let two: Storage
  before(async () => {
    database = await createTestDatabase('postgres')
    one = openStorage(database.url)
    two = openStorage(database.url)
  })
  after(async () => {
    await one?.close()
    await two?.close()
    await database?.drop()
  })

  it('does not deadlock two groups that claim the same keys in opposite orders', async () => {
    const projectId = (
      await new ProjectService(one.db, new ManualClock(NOW), new ServiceEvents()).createProject({ name: 'Shop', plan: 'pro' })
    ).project.id
    const claimOf = (key: string): IdempotencyClaim => ({
      projectId,
      key,
      fingerprint: 'f',
      claimToken: randomUUID(),
      nowMs: NOW,
      leaseMs: LEASE_MS,
      keepMs: 24 * 60 * 60 * 1000,
    })
    const keys = Array.from({ length: 300 }, (_, i) => `burst-${String(i).padStart(3, '0')}`)
    const ascending = keys.map(claimOf)
    const descending = [...keys].reverse().map(claimOf)
    // One group has inserted the first half of the keys and not committed; the other, on another instance, runs meanwhile.
    // Were its keys taken in the order given, it would insert the second half, then wait for the first group at key
    // 149, while the first group goes on to the second half and waits for it: a deadlock, one of them cancelled (40P01).
    const answered = await one.db.transaction().execute(async (tx) => {
      const firstHalf = await idempotencyKeysRepository.insertClaims(tx, 'postgres', ascending.slice(0, 150))
      const racing = idempotencyKeysRepository.insertClaims(two.db, 'postgres', descending).then(
        (inserted) => inserted,
        (error: unknown) => error,
      )
      await sleep(300)
      const secondHalf = await idempotencyKeysRepository.insertClaims(tx, 'postgres', ascending.slice(150))
      // Wrapped, so that the commit does not wait for the racing group, which waits for the commit.
      return { inserted: firstHalf.size + secondHalf.size, racing }
    })
    const racing = await answered.racing
    assert.ok(racing instanceof Set, String(racing))
    assert.equal(answered.inserted + racing.size, keys.length, 'every key claimed once')
  })
})
