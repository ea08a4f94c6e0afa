import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, it } from 'node:test'
import { sql } from 'kysely'
import pg from 'pg'
import { PayloadReads } from '../../../src/features/payloads/reads.js'
import { payloadsRepository } from '../../../src/features/payloads/repository.js'
import { openStorage } from '../../../src/platform/db/database.js'
import { createTestDatabase, describePostgres, forEachDatabase, statementsDuring } from '../../support/databases.js'
import { createPayload } from '../../support/payloads.js'
import { bearer, startTestService, type TestService } from '../../support/service.js'

/** The Pro plan's request rate raised and its poll gate off, so that a test's own reads are never refused. */
const UNLIMITED_READS = { env: { LIMITS_PRO: '{"requestsPerMinute": 100000, "minPollIntervalMs": 0}' } }

forEachDatabase('payload reads, read together', (dialect) => {
  let t: TestService
  before(async () => {
    t = await startTestService(dialect, UNLIMITED_READS)
  })
  after(() => t.stop())

  it('answers each read of one turn with its own payload, as committed before it was asked for', async () => {
    const { apiKey } = await t.createProject('pro')
    const other = await t.createProject('pro')
    const uuids = [await createPayload(t, apiKey), await createPayload(t, apiKey), await createPayload(t, apiKey)]
    const othersPayload = await createPayload(t, other.apiKey)
    // Changed behind the service's back just before the reads: they see it.
    await t.service.ctx.storage.db.updateTable('payloads').set({ status: 'rejected' }).where('uuid', '=', uuids[1]!).execute()
    const asked = [uuids[0]!, uuids[1]!, uuids[0]!, randomUUID(), othersPayload, uuids[2]!]
    const { result: answers, statements } = await statementsDuring(() =>
      Promise.all(asked.map((uuid) => t.inject({ method: 'GET', url: `/api/v1/payloads/${uuid}`, headers: bearer(apiKey) }))),
    )
    assert.deepEqual(
      answers.map((answer) => (answer.statusCode === 200 ? `${answer.json().uuid} ${answer.json().status}` : answer.statusCode)),
      [`${uuids[0]} pending`, `${uuids[1]} rejected`, `${uuids[0]} pending`, 404, 404, `${uuids[2]} pending`],
      "each its own payload; an unknown uuid and another project's payload are not found",
    )
    if (dialect === 'postgres') {
      const reads = statements.filter((text) => /from "payloads" where "uuid"|from payloads where uuid/.test(text))
      assert.equal(reads.length, 1, `six reads, one statement: ${reads.join('\n')}`)
    }
  })

  it('gives two readers of the same payload a payload each', async () => {
    const { apiKey } = await t.createProject('pro')
    const uuid = await createPayload(t, apiKey)
    const payloads = t.service.ctx.payloads
    const [first, second] = await Promise.all([payloads.getForSigning(uuid), payloads.getForSigning(uuid)])
    assert.notEqual(first, second)
    assert.deepEqual(first, second)
    first.transaction!.Amount = '1'
    assert.notEqual(second.transaction!.Amount, '1', 'a change to one is not seen by the other')
  })
})

/** The group statement's text: the uuids as one array, each probed by the primary key. */
const GROUP_STATEMENT = /from unnest\(\$1::text\[\]\) as wanted\(uuid\)/
const uuidsOf = (count: number) => Array.from({ length: count }, () => randomUUID())

/** Every node of an EXPLAIN (FORMAT JSON) plan. */
function planNodes(plan: Record<string, unknown>): Record<string, unknown>[] {
  return [plan, ...((plan.Plans as Record<string, unknown>[] | undefined) ?? []).flatMap(planNodes)]
}

describePostgres('payload read groups on PostgreSQL', () => {
  it('reads a lone read with the one-uuid statement, which keeps its generic plan', async () => {
    const database = await createTestDatabase('postgres')
    const storage = openStorage(database.url)
    try {
      const reads = new PayloadReads(storage.db, 'postgres')
      await storage.db.selectFrom('payloads').select('uuid').limit(1).execute() // the pool's first connection set up
      const { statements } = await statementsDuring(() => reads.read(randomUUID()))
      assert.deepEqual(
        statements.map((text) => /where "uuid" = \$1$/.test(text)),
        [true],
        statements.join('\n'),
      )
      const { statements: twice } = await statementsDuring(() => Promise.all([reads.read(randomUUID()), reads.read(randomUUID())]))
      assert.deepEqual(
        twice.map((text) => GROUP_STATEMENT.test(text)),
        [true],
        twice.join('\n'),
      )
    } finally {
      await storage.close()
      await database.drop()
    }
  })

  it('fails a group whose statement fails once, as a whole, not read again one uuid at a time', async () => {
    const database = await createTestDatabase('postgres')
    const url = new URL(database.url)
    url.searchParams.set('statement_timeout', '300') // as an operator may set on the role
    const storage = openStorage(url.href)
    const locker = new pg.Client({ connectionString: database.url })
    await locker.connect()
    try {
      const reads = new PayloadReads(storage.db, 'postgres')
      await Promise.all([reads.read(randomUUID()), reads.read(randomUUID())]) // the statement prepared
      // A migration's ALTER TABLE, holding its lock longer than statement_timeout.
      await locker.query('begin')
      await locker.query('lock table payloads in access exclusive mode')
      const started = performance.now()
      const { result, statements } = await statementsDuring(() => Promise.allSettled(uuidsOf(10).map((uuid) => reads.read(uuid))))
      const elapsedMs = performance.now() - started
      await locker.query('rollback')
      assert.deepEqual(
        result.map((settled) => settled.status === 'rejected' && (settled.reason as { code?: string }).code),
        Array(10).fill('57014'),
        'each read fails with the statement timeout',
      )
      assert.equal(statements.length, 1, `one statement for the ten: ${statements.join('\n')}`)
      assert.ok(elapsedMs < 2000, `the ten failed after ${Math.round(elapsedMs)} ms, one statement_timeout being 300 ms`)
    } finally {
      await locker.end().catch(() => {})
      await storage.close()
      await database.drop()
    }
  })

  it('reads by the primary key on a fresh database, after its plan was made on the empty table, as the table grows', async () => {
    const t = await startTestService('postgres')
    try {
      const { projectId } = await t.createProject('pro')
      await t.service.ctx.storage.db.connection().execute(async (connection) => {
        // Six groups of ten on the empty table, as a new deployment's first reads: the sixth makes the generic plan.
        for (let i = 0; i < 6; i++) await payloadsRepository.findManyByUuid(connection, uuidsOf(10))
        // The table grows before autovacuum's first ANALYZE would have the plan made again.
        await sql`insert into payloads (uuid, project_id, type, status, expires_at, created_at)
          select gen_random_uuid()::text, ${projectId}, 'sign', 'pending', 0, 0 from generate_series(1, 100000)`.execute(connection)
        const { rows: prepared } = await sql<{ name: string }>`
          select name from pg_prepared_statements where statement like '%as wanted(uuid)%'`.execute(connection)
        assert.equal(prepared.length, 1, 'the group statement is prepared on this connection')
        const { rows } = await sql<{ 'QUERY PLAN': [{ Plan: Record<string, unknown> }] }>`
          explain (analyze, format json) execute ${sql.id(prepared[0]!.name)}(${sql.lit(`{${uuidsOf(10).join(',')}}`)})`.execute(connection)
        const plan = rows[0]!['QUERY PLAN'][0].Plan
        const scans = planNodes(plan).filter((node) => node['Node Type'] === 'Seq Scan' && node['Relation Name'] === 'payloads')
        assert.deepEqual(scans, [], `payloads read by a sequential scan, ${plan['Actual Total Time']} ms a group`)
      })
    } finally {
      await t.stop()
    }
  })
})
