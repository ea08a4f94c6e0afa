// The database reached and answering, but at one of its limits: no connection slot left for the service, a statement
// running out of the statement_timeout or lock_timeout an operator set, a table held by a migration's lock, a full disk
// (SQLite). Each is "retry shortly": the service answers 503 with Retry-After, logs it as an error for an operator,
// writes nothing for the request it refused, and serves again by itself.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import type { LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import pg from 'pg'
import { loadConfig } from '../../src/config.js'
import { type RunningService, startService } from '../../src/main.js'
import { ManualClock } from '../../src/platform/clock.js'
import { createLogger } from '../../src/platform/logger.js'
import { createTestDatabase, describePostgres, POSTGRES_ADMIN_URL } from '../support/databases.js'
import { payloadBodies } from '../support/fixtures.js'
import { bearer } from '../support/service.js'

const UNAVAILABLE = { error: 'Service temporarily unavailable; retry shortly' }

interface Started {
  service: RunningService
  apiKey: string
  /** The error codes the service logged, in order, each after its level: 'error 53300', 'warn 57P01'. */
  loggedCodes: string[]
  create(headers?: Record<string, string>): Promise<LightMyRequestResponse>
  stop(): Promise<void>
}

async function start(url: string): Promise<Started> {
  const loggedCodes: string[] = []
  const logger = createLogger('warn', {
    write: (line: string) => {
      const { level, err } = JSON.parse(line) as { level: number; err?: { code?: unknown } }
      if (typeof err?.code === 'string') loggedCodes.push(`${level >= 50 ? 'error' : 'warn'} ${err.code}`)
    },
  })
  // The poll gate off and the request rate raised, so that a test's own requests are never refused.
  const config = loadConfig({ DATABASE_URL: url, PORT: '0', LIMITS_PRO: '{"minPollIntervalMs": 0, "requestsPerMinute": 100000}' })
  const service = await startService(config, { clock: new ManualClock(), logger, listen: false, workers: false })
  const apiKey = (await service.ctx.projects.createProject({ name: 'at its limits', plan: 'pro' })).key.apiKey
  return {
    service,
    apiKey,
    loggedCodes,
    create: (headers = {}) =>
      service.app.inject({
        method: 'POST',
        url: '/api/v1/payloads',
        headers: { ...bearer(apiKey), ...headers },
        payload: payloadBodies.connect,
      }),
    stop: () => service.stop(),
  }
}

async function withAdmin<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await run(client)
  } finally {
    await client.end()
  }
}

/** Polls `holds` until it does, or fails after 10 s. */
async function until(holds: () => Promise<boolean>): Promise<void> {
  for (const deadline = performance.now() + 10_000; !(await holds()); await sleep(20)) {
    if (performance.now() > deadline) assert.fail('not so after 10 s')
  }
}

/**
 * How many sessions of the watcher's database wait for a lock. The watcher must be in no transaction: a session in one
 * sees pg_stat_activity as it was at its first look, for the whole transaction (stats_fetch_consistency).
 */
const locksWaitedFor = async (watcher: pg.Client) =>
  Number(
    (
      await watcher.query(
        "select count(*) as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
      )
    ).rows[0].waiting,
  )

const countPayloads = (service: RunningService) =>
  service.ctx.storage.db
    .selectFrom('payloads')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow()
    .then((row) => Number(row.count))

describePostgres('PostgreSQL at its limits', () => {
  it('answers 503, not 500, when PostgreSQL has no connection slot left for the service, and serves again once it has', async () => {
    const role = `countersign_limited_${randomBytes(6).toString('hex')}`
    const database = await createTestDatabase('postgres', { empty: true })
    const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL })
    await admin.connect()
    let started: Started | undefined
    try {
      // The service's own role, not a superuser: a role's CONNECTION LIMIT holds for it, as max_connections does.
      await admin.query(`create role ${role} login`)
      const name = new URL(database.url).pathname.slice(1)
      await admin.query(`alter database ${name} owner to ${role}`)
      const url = new URL(database.url)
      url.username = role
      started = await start(url.href)
      assert.equal((await started.create()).statusCode, 201)

      // Every slot taken: the role's sessions end, and no new one is let in (53300, too_many_connections).
      await admin.query(`alter role ${role} connection limit 0`)
      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where usename = $1', [role])
      await until(async () => (await admin.query('select 1 from pg_stat_activity where usename = $1', [role])).rowCount === 0)
      const refused: number[] = []
      for (let attempt = 0; attempt < 20 && !started.loggedCodes.includes('error 53300'); attempt++) {
        const answer = await started.create()
        refused.push(answer.statusCode)
        assert.equal(answer.statusCode, 503, answer.body)
        assert.deepEqual(answer.json(), UNAVAILABLE)
        assert.equal(answer.headers['retry-after'], '5')
      }
      assert.ok(
        started.loggedCodes.includes('error 53300'),
        `PostgreSQL refused a connection as too many, logged as an error for an operator (logged: ${started.loggedCodes})`,
      )

      await admin.query(`alter role ${role} connection limit -1`)
      assert.equal((await started.create()).statusCode, 201, 'serves again without a restart')
      assert.equal(await countPayloads(started.service), 2, `the ${refused.length} refused creations wrote nothing`)
    } finally {
      await started?.stop().catch(() => {})
      await database.drop().catch(() => {})
      await admin.query(`drop role if exists ${role}`).catch(() => {})
      await admin.end()
    }
  })

  for (const [setting, code] of [
    ['statement_timeout', '57014'],
    ['lock_timeout', '55P03'],
  ]) {
    it(`answers 503, not 500, when a statement runs out of the database's ${setting}`, async () => {
      const database = await createTestDatabase('postgres')
      const name = new URL(database.url).pathname.slice(1)
      // As an operator may set it, so that no statement waits long on a lock.
      await withAdmin(POSTGRES_ADMIN_URL, (admin) => admin.query(`alter database ${name} set ${setting} = 1000`))
      const started = await start(database.url)
      const locker = new pg.Client({ connectionString: database.url })
      await locker.connect()
      try {
        const created = await started.create()
        assert.equal(created.statusCode, 201)
        const read = () =>
          started.service.app.inject({ method: 'GET', url: `/api/v1/payloads/${created.json().uuid}`, headers: bearer(started.apiKey) })

        // A migration's ALTER TABLE holds the table for longer than the timeout.
        await locker.query('begin')
        await locker.query(`set local ${setting} = 0`)
        await locker.query('lock table payloads in access exclusive mode')
        const during = [await read(), await started.create()]
        await locker.query('rollback')
        assert.deepEqual(
          during.map((answer) => [answer.statusCode, answer.json(), answer.headers['retry-after']]),
          [
            [503, UNAVAILABLE, '5'],
            [503, UNAVAILABLE, '5'],
          ],
        )
        assert.deepEqual(started.loggedCodes, [`error ${code}`, `error ${code}`], `each ran out of the ${setting}, logged as an error`)

        assert.equal((await read()).statusCode, 200)
        assert.equal((await started.create()).statusCode, 201)
        assert.equal(await countPayloads(started.service), 2, 'the refused creation wrote nothing')
      } finally {
        await locker.end().catch(() => {})
        await started.stop()
        await database.drop()
      }
    })
  }

  it('refuses with 503 after 5 s a write queued behind groups hung on a held table, and never writes it', async () => {
    const database = await createTestDatabase('postgres')
    const started = await start(database.url)
    const locker = new pg.Client({ connectionString: database.url })
    await locker.connect()
    const watcher = new pg.Client({ connectionString: database.url })
    await watcher.connect()
    try {
      const { service } = started
      const toReject: string[] = []
      for (let i = 0; i < 4; i++) toReject.push((await started.create()).json().uuid)
      const before = await countPayloads(service)
      const reject = (uuid: string) => service.app.inject({ method: 'POST', url: `/api/v1/sign/${uuid}/reject`, payload: {} })
      const kinds = {
        creation: (_: number) => started.create(),
        'creation with an Idempotency-Key': (i: number) => started.create({ 'idempotency-key': `held-${i}` }),
        rejection: (i: number) => reject(toReject[i]!),
      }

      // A migration holds both tables, and PostgreSQL stops answering the statements that need them.
      await locker.query('begin')
      await locker.query('lock table payloads, idempotency_keys in access exclusive mode')
      // Of each kind, three requests in turns of their own: three groups, each holding a pooled connection, hung on the
      // lock (three groups of a kind are written at once). The fourth waits for a group to start.
      const hung: Record<string, Promise<LightMyRequestResponse>[]> = {}
      const queued: Record<string, Promise<LightMyRequestResponse>> = {}
      let waiting = 0
      for (const [kind, send] of Object.entries(kinds)) {
        hung[kind] = []
        for (let i = 0; i < 3; i++) {
          hung[kind].push(send(i))
          // Its group started, and waits for the lock: the next request cannot join it.
          waiting++
          await until(async () => (await locksWaitedFor(watcher)) === waiting)
        }
      }
      const waited = performance.now()
      for (const [kind, send] of Object.entries(kinds)) queued[kind] = send(3)
      const refused = await Promise.race([
        Promise.all(Object.values(queued)),
        sleep(15_000).then(() => assert.fail('the queued requests were still waiting after 15 s')),
      ])
      const waitedMs = performance.now() - waited
      assert.deepEqual(
        refused.map((answer) => [answer.statusCode, answer.json(), answer.headers['retry-after']]),
        Array(3).fill([503, UNAVAILABLE, '5']),
        Object.keys(kinds).join(', '),
      )
      assert.ok(waitedMs >= 4900, `refused after ${Math.round(waitedMs)} ms, the pool's connection timeout being 5 s`)

      await locker.query('rollback')
      const answered = await Promise.all(Object.values(hung).flat())
      assert.deepEqual(
        answered.map((answer) => answer.statusCode),
        [201, 201, 201, 201, 201, 201, 200, 200, 200],
        'the hung groups are written once the table is free',
      )
      assert.equal(await countPayloads(service), before + 6, 'the two refused creations wrote nothing')
      const fourth = await service.ctx.storage.db
        .selectFrom('payloads')
        .select('status')
        .where('uuid', '=', toReject[3]!)
        .executeTakeFirstOrThrow()
      assert.equal(fourth.status, 'pending', 'the refused rejection moved nothing')
      const keptKeys = await service.ctx.storage.db.selectFrom('idempotency_keys').select('key').execute()
      assert.deepEqual(keptKeys.map((row) => row.key).sort(), ['held-0', 'held-1', 'held-2'], 'the refused claim kept no key')
      assert.equal((await started.create({ 'idempotency-key': 'held-3' })).statusCode, 201, 'its key is free to use')
    } finally {
      await locker.end().catch(() => {})
      await watcher.end().catch(() => {})
      await started.stop()
      await database.drop()
    }
  })
})

describe('SQLite at its limits', () => {
  // SQLite rolls some transactions back itself when the file cannot grow, depending on where the write stopped: a few
  // pages to spare reach other places than none.
  for (const spare of [0, 2, 3, 5]) {
    it(`answers 503, not 500, once the file can grow no more (disk full, ${spare} pages spare), and serves again once it can`, async () => {
      const database = await createTestDatabase('sqlite')
      const started = await start(database.url)
      try {
        const { db } = started.service.ctx.storage
        const toReject: string[] = []
        for (let i = 0; i < 10; i++) toReject.push((await started.create()).json().uuid)
        // The file held near the pages it has: what a full disk does to the writes that need a page.
        const pages = (await sql<{ page_count: number }>`pragma page_count`.execute(db)).rows[0]!.page_count
        await sql.raw(`pragma max_page_count = ${pages + spare}`).execute(db)
        let sent = 0
        while (!started.loggedCodes.includes('error SQLITE_FULL') && sent < 500) {
          const answers = [await started.create({ 'idempotency-key': `full-${sent++}` })]
          const uuid = toReject.shift()
          if (uuid) answers.push(await started.service.app.inject({ method: 'POST', url: `/api/v1/sign/${uuid}/reject`, payload: {} }))
          for (const answer of answers) {
            if (answer.statusCode < 300) continue
            assert.equal(answer.statusCode, 503, answer.body)
            assert.deepEqual(answer.json(), UNAVAILABLE)
            assert.equal(answer.headers['retry-after'], '5')
          }
        }
        assert.ok(
          started.loggedCodes.includes('error SQLITE_FULL'),
          `the file filled up, logged as an error (logged: ${started.loggedCodes})`,
        )
        const written = await countPayloads(started.service)

        await sql.raw('pragma max_page_count = 4294967294').execute(db)
        const again = await started.create({ 'idempotency-key': `full-${sent - 1}` })
        assert.equal(again.statusCode, 201, 'serves again, and the refused request kept nothing under its key')
        assert.equal(await countPayloads(started.service), written + 1)
      } finally {
        await started.stop()
        await database.drop()
      }
    })
  }
})
