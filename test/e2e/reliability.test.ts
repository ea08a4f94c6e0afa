// Reliability under load, measured: an instance killed with SIGKILL, Redis cut away and back, PostgreSQL cut away and
// back, each while requests are in flight. The figures these tests print are the ones in docs/deployment.md.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { performance } from 'node:perf_hooks'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { loadConfig } from '../../src/config.js'
import type { PlanName } from '../../src/features/projects/plans.js'
import { type RunningService, startService } from '../../src/main.js'
import { openStorage } from '../../src/platform/db/database.js'
import { createLogger } from '../../src/platform/logger.js'
import { createTestDatabase, describePostgres, forEachDatabase, postgresSkip, type TestDatabase } from '../support/databases.js'
import { payloadBodies } from '../support/fixtures.js'
import { redisSkip, TEST_REDIS_URL } from '../support/redis.js'
import { type Instance, instanceEnv, startInstance, stopInstance } from '../support/serve-process.js'
import { openSse } from '../support/sse.js'
import { type ProxiedUrl, proxied } from '../support/tcp-proxy.js'
import { countByDeliveryId, type ReceivedRequest, startWebhookReceiver } from '../support/webhook-receiver.js'

/** No request may take longer than this, outage or not: a request still open then counts as hung. */
const REQUEST_TIMEOUT_MS = 10_000
/** The webhook dispatcher's lease (60 s) and a margin: a claim held by a killed instance is taken up after it. */
const PAST_LEASE_MS = 90_000
/** How long the restarted instance may take to deliver every event owed, its clock being past every lease. */
const DELIVERED_WITHIN_MS = 30_000

/** A request bounded in time; a transport failure (the instance died, the request hung) is status 0. */
async function request(
  url: string,
  init: { method?: string; apiKey?: string; body?: object } = {},
): Promise<{ status: number; body: string; retryAfter: string | null }> {
  try {
    const response = await fetch(url, {
      method: init.method ?? 'GET',
      headers: {
        ...(init.apiKey ? { authorization: `Bearer ${init.apiKey}` } : {}),
        ...(init.body ? { 'content-type': 'application/json' } : {}),
      },
      body: init.body ? JSON.stringify(init.body) : undefined,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    })
    return { status: response.status, body: await response.text(), retryAfter: response.headers.get('retry-after') }
  } catch {
    return { status: 0, body: '', retryAfter: null }
  }
}

/**
 * Creates a project on each of `plans` in the database at `databaseUrl`, and returns their API keys. The instances
 * under test serve them; making them is not what is tested, so it is done in this process, not by a CLI process each.
 */
async function createProjects(databaseUrl: string, plans: PlanName[]): Promise<string[]> {
  const setup = await startService(loadConfig({ DATABASE_URL: databaseUrl }), {
    listen: false,
    workers: false,
    logger: createLogger('silent'),
  })
  try {
    const apiKeys: string[] = []
    for (const plan of plans) apiKeys.push((await setup.ctx.projects.createProject({ name: `Shop ${plan}`, plan })).key.apiKey)
    return apiKeys
  } finally {
    await setup.stop()
  }
}

/** The ids of the deliveries recorded as succeeded in the database at `databaseUrl`. */
async function succeededDeliveries(databaseUrl: string): Promise<Set<string>> {
  const storage = openStorage(databaseUrl)
  try {
    const rows = await storage.db.selectFrom('webhook_deliveries').select('id').where('state', '=', 'succeeded').execute()
    return new Set(rows.map((row) => row.id))
  } finally {
    await storage.close()
  }
}

forEachDatabase('an instance killed with SIGKILL under load', (dialect) => {
  it('keeps every payload answered 201, every rejection answered 200, and delivers every payload.rejected event', async (t) => {
    const database = await createTestDatabase(dialect)
    const receiver = await startWebhookReceiver()
    const env = { ...instanceEnv(database.url), LIMITS_PRO: '{"requestsPerMinute": 1000000, "monthlyPayloads": 1000000}' }
    let instance: Instance | undefined
    let restarted: RunningService | undefined
    try {
      const [apiKey] = (await createProjects(database.url, ['pro'])) as [string]
      instance = await startInstance(env)
      const hook = await request(`${instance.url}/api/v1/webhooks`, { method: 'POST', apiKey, body: { url: receiver.url } })
      assert.equal(hook.status, 201, hook.body)

      const created: string[] = []
      const rejected: string[] = []
      const target = instance
      let killed = false
      // Four clients create and reject in a loop until the kill, each bounded in count.
      const client = async (n: number) => {
        for (let i = 0; i < 2000 && !killed; i++) {
          const made = await request(`${target.url}/api/v1/payloads`, {
            method: 'POST',
            apiKey,
            body: { type: 'signMessage', message: `Order ${n}-${i}` },
          })
          if (made.status !== 201) continue
          const { uuid } = JSON.parse(made.body) as { uuid: string }
          created.push(uuid)
          const rejection = await request(`${target.url}/api/v1/sign/${uuid}/reject`, { method: 'POST', body: {} })
          if (rejection.status === 200) rejected.push(uuid)
        }
      }
      const clients = Promise.all([0, 1, 2, 3].map(client))
      await sleep(1500)
      instance.process.kill('SIGKILL')
      const [, signal] = await once(instance.process, 'exit')
      killed = true
      await clients
      assert.equal(signal, 'SIGKILL')
      assert.ok(rejected.length >= 5, `the load was under way at the kill (${created.length} created, ${rejected.length} rejected)`)
      // What the killed instance had recorded as received: the restarted one must not send any of it again.
      const recordedAtKill = await succeededDeliveries(database.url)
      const restartedAtMs = performance.now()

      // The new instance runs in this process, with a clock as far ahead as the lease: the claims the killed one held
      // when it died have lapsed for it, as they would have after a minute for an instance started in its place.
      restarted = await startService(loadConfig({ ...env, PORT: '0' }), {
        clock: { now: () => Date.now() + PAST_LEASE_MS },
        logger: createLogger('silent'),
      })
      const statuses = new Map<string, string>()
      for (const uuid of created) {
        const read = await request(`${restarted.url}/api/v1/payloads/${uuid}`, { apiKey })
        assert.equal(read.status, 200, `payload ${uuid} was answered 201 and must be readable: ${read.body}`)
        statuses.set(uuid, (JSON.parse(read.body) as { status: string }).status)
      }
      for (const uuid of rejected) assert.equal(statuses.get(uuid), 'rejected', `payload ${uuid} was answered 200 on rejection`)

      // Rejections whose answer was lost in the kill may have been committed too: they owe an event as well.
      const committed = new Set([...statuses].filter(([, status]) => status === 'rejected').map(([uuid]) => uuid))
      const delivered = () =>
        new Set(
          receiver.requests
            .map((r) => JSON.parse(r.rawBody.toString()) as { event: string; payload: { uuid: string } })
            .filter((body) => body.event === 'payload.rejected')
            .map((body) => body.payload.uuid),
        )
      const started = performance.now()
      while (performance.now() - started < DELIVERED_WITHIN_MS && [...committed].some((uuid) => !delivered().has(uuid))) await sleep(250)
      const waitedMs = Math.round(performance.now() - started)
      assert.deepEqual(
        [...committed].filter((uuid) => !delivered().has(uuid)),
        [],
        'every rejected payload has its event delivered',
      )
      assert.deepEqual([...delivered()].filter((uuid) => !committed.has(uuid)).sort(), [], 'no event for a payload that is not rejected')
      // A delivery in flight at the kill may arrive once more (at least once); never more than that.
      const counts = countByDeliveryId(receiver.requests)
      const repeated = [...counts.values()].filter((count) => count > 1)
      assert.ok(
        repeated.every((count) => count === 2),
        `a delivery arrived more than twice: ${JSON.stringify([...counts].filter(([, c]) => c > 2))}`,
      )
      assert.equal(counts.size, committed.size, 'one delivery per rejected payload')
      // Every request before the restart came from the killed instance, every one after it from the restarted one.
      const deliveryId = (r: ReceivedRequest) => String(r.headers['x-countersign-delivery'])
      const sentAgain = receiver.requests.filter((r) => r.receivedAtMs > restartedAtMs).map(deliveryId)
      assert.deepEqual(
        sentAgain.filter((id) => recordedAtKill.has(id)),
        [],
        'a delivery recorded as succeeded before the kill is never sent again',
      )
      const sentBefore = new Set(receiver.requests.filter((r) => r.receivedAtMs <= restartedAtMs).map(deliveryId))
      assert.deepEqual(
        [...counts].filter(([id, count]) => count > 1 && !(sentBefore.has(id) && sentAgain.includes(id))).map(([id]) => id),
        [],
        'only a delivery the killed instance sent, and did not record, arrives twice: once from each instance',
      )
      t.diagnostic(
        `${dialect}: ${created.length} created, ${rejected.length} rejected with 200, ${committed.size} rejected in all; ` +
          `every event delivered ${waitedMs} ms after the restart; ${repeated.length} deliveries arrived twice`,
      )
    } finally {
      await stopInstance(instance)
      await restarted?.stop()
      await receiver.close()
      await database.drop()
    }
  })
})

describe('Redis cut away and back under load, two instances', { skip: redisSkip || postgresSkip }, () => {
  let database: TestDatabase
  let proxy: ProxiedUrl
  let env: Record<string, string>
  const instances: Instance[] = []

  before(async () => {
    database = await createTestDatabase('postgres')
    proxy = await proxied(TEST_REDIS_URL, 6379)
    env = { ...instanceEnv(database.url), REDIS_URL: proxy.url }
    instances.push(...(await Promise.all([startInstance(env), startInstance(env)])))
  })

  after(async () => {
    await Promise.all(instances.map(stopInstance))
    await proxy?.close()
    await database?.drop()
  })

  it('answers without 5xx while Redis is away, then counts the shared limit and fans out live events again', async (t) => {
    const [one, two] = instances as [Instance, Instance]
    const [pro, free] = (await createProjects(database.url, ['pro', 'free'])) as [string, string]
    // Projects for the probes after the outage, each with a window of its own.
    const probes = await createProjects(database.url, Array<PlanName>(6).fill('free'))
    // Both instances have counted in Redis before the cut.
    for (const instance of instances) assert.equal((await request(`${instance.url}/api/v1/payloads`, { apiKey: free })).status, 200)

    proxy.cut()
    const cutAt = performance.now()
    const during: number[] = []
    const slowestMs: number[] = []
    // Concurrent reads of a Free project (14 per instance: within its limit on each instance) and writes of a Pro
    // project, whose live events cannot be published while Redis is away, spread over about two seconds.
    await Promise.all([
      ...[0, 1].map(async (lane) => {
        for (let i = 0; i < 14; i++) {
          const began = performance.now()
          during.push((await request(`${instances[(i + lane) % 2]?.url}/api/v1/payloads`, { apiKey: free })).status)
          slowestMs.push(performance.now() - began)
          await sleep(150)
        }
      }),
      (async () => {
        for (let i = 0; i < 5; i++) {
          const made = await request(`${instances[i % 2]?.url}/api/v1/payloads`, {
            method: 'POST',
            apiKey: pro,
            body: payloadBodies.connect,
          })
          during.push(made.status)
          if (made.status !== 201) continue
          const { uuid } = JSON.parse(made.body) as { uuid: string }
          during.push((await request(`${instances[(i + 1) % 2]?.url}/api/v1/sign/${uuid}/reject`, { method: 'POST', body: {} })).status)
          await sleep(400)
        }
      })(),
    ])
    assert.deepEqual(
      during.filter((status) => status !== 200 && status !== 201),
      [],
      'every request during the outage is answered, within the per-instance limits',
    )
    const outageMs = Math.round(performance.now() - cutAt)

    proxy.restore()
    const restoredAt = performance.now()
    // Recovered once 26 requests of a fresh Free project, alternating between the instances, get exactly 20 answers
    // 200: its one limit is counted across both again.
    let sharedAfterMs = -1
    for (const apiKey of probes) {
      const statuses: number[] = []
      for (let i = 0; i < 26; i++) statuses.push((await request(`${instances[i % 2]?.url}/api/v1/payloads`, { apiKey })).status)
      assert.deepEqual(
        statuses.filter((s) => s !== 200 && s !== 429),
        [],
      )
      if (statuses.filter((s) => s === 200).length === 20 && statuses.slice(20).every((s) => s === 429)) {
        sharedAfterMs = Math.round(performance.now() - restoredAt)
        break
      }
      await sleep(1000)
    }
    assert.ok(sharedAfterMs >= 0, 'the shared rate limit is enforced again within seconds of Redis coming back')

    // A change made on one instance reaches a live stream on the other.
    const made = await request(`${one.url}/api/v1/payloads`, { method: 'POST', apiKey: pro, body: payloadBodies.connect })
    assert.equal(made.status, 201)
    const { uuid } = JSON.parse(made.body) as { uuid: string }
    const stream = await openSse(`${two.url}/api/v1/payloads/${uuid}/events`, { authorization: `Bearer ${pro}` })
    try {
      assert.equal(((await stream.nextData(5000)) as { status: string }).status, 'pending')
      assert.equal((await request(`${one.url}/api/v1/sign/${uuid}/reject`, { method: 'POST', body: {} })).status, 200)
      assert.equal(((await stream.nextData(5000)) as { status: string }).status, 'rejected')
    } finally {
      stream.close()
    }
    // Logs are buffered until 4 KiB or exit: the warning is read once the instances have stopped.
    await Promise.all(instances.map(stopInstance))
    assert.ok(
      one.output
        .concat(two.output)
        .some((line) => line.includes('Redis is unreachable: rate limits are counted per instance until it is back')),
      'the fallback is logged as docs/deployment.md says',
    )
    t.diagnostic(
      `Redis away ${outageMs} ms: ${during.length} requests, none 5xx, slowest ${Math.round(Math.max(...slowestMs))} ms; ` +
        `shared limit enforced again ${sharedAfterMs} ms after Redis was back`,
    )
  })
})

describePostgres('PostgreSQL cut away and back under concurrent load', () => {
  let database: TestDatabase
  let proxy: ProxiedUrl
  let service: RunningService
  let apiKey: string

  before(async () => {
    database = await createTestDatabase('postgres')
    proxy = await proxied(database.url, 5432)
    const config = loadConfig({
      DATABASE_URL: proxy.url,
      HOST: '127.0.0.1',
      PORT: '0',
      LIMITS_PRO: '{"requestsPerMinute": 1000000, "monthlyPayloads": 1000000}',
    })
    service = await startService(config, { logger: createLogger('silent'), listen: true, workers: false })
    apiKey = (await service.ctx.projects.createProject({ name: 'outage under load', plan: 'pro' })).key.apiKey
  })

  after(async () => {
    await service?.stop()
    await proxy?.close()
    await database?.drop()
  })

  it('answers every request 201 or 503, none hung, and recovers by itself', async (t) => {
    const url = `${service.url}/api/v1/payloads`
    const answers: { status: number; retryAfter: string | null; ms: number; at: number }[] = []
    let stop = false
    // Six clients in a loop: before the cut, while it lasts and after it, bounded in count.
    const client = async () => {
      for (let i = 0; i < 1000 && !stop; i++) {
        const began = performance.now()
        const { status, retryAfter } = await request(url, { method: 'POST', apiKey, body: payloadBodies.connect })
        answers.push({ status, retryAfter, ms: performance.now() - began, at: performance.now() })
        if (status === 503) await sleep(20)
      }
    }
    const clients = Promise.all([0, 1, 2, 3, 4, 5].map(client))
    await sleep(500)
    proxy.cut()
    const cutAt = performance.now()
    await sleep(1500)
    proxy.restore()
    const restoredAt = performance.now()
    const deadline = restoredAt + 15_000
    while (performance.now() < deadline && !answers.some((a) => a.at > restoredAt && a.status === 201)) await sleep(50)
    await sleep(500)
    stop = true
    await clients

    const unexpected = answers.filter((a) => a.status !== 201 && a.status !== 503)
    assert.deepEqual(unexpected, [], 'every answer is 201 or 503: never 500, never a request left hanging')
    const unavailable = answers.filter((a) => a.status === 503)
    assert.ok(unavailable.length > 0, 'requests made while the database was away were answered 503')
    assert.ok(
      unavailable.every((a) => a.retryAfter === '5'),
      'each 503 says when to retry',
    )
    assert.ok(
      answers.filter((a) => a.at < cutAt).every((a) => a.status === 201),
      'before the cut every request succeeded',
    )
    const firstRecovered = answers.find((a) => a.at > restoredAt && a.status === 201)
    assert.ok(firstRecovered, 'the service recovers without a restart')
    const lastAnswers = answers.slice(-6)
    assert.ok(
      lastAnswers.every((a) => a.status === 201),
      `after recovery requests succeed again: ${JSON.stringify(lastAnswers)}`,
    )
    assert.equal((await request(`${service.url}/readyz`)).status, 200)
    t.diagnostic(
      `PostgreSQL away 1500 ms under 6 concurrent clients: ${answers.length} requests, ${unavailable.length} answered 503, ` +
        `slowest ${Math.round(Math.max(...answers.map((a) => a.ms)))} ms; first 201 ${Math.round(firstRecovered.at - restoredAt)} ms after it was back`,
    )
  })
})
