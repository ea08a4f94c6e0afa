// Idempotency-Key on POST /payloads and POST /webhooks: a retried creation creates nothing new and counts once.
import assert from 'node:assert/strict'
import { request as httpRequest } from 'node:http'
import { after, before, describe, it } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { usageRepository } from '../../../src/features/projects/usage-repository.js'
import { idempotencyKeysRepository } from '../../../src/platform/db/idempotency-keys-repository.js'
import { utcMonth } from '../../../src/platform/utc.js'
import { createTestDatabase, describePostgres, forEachDatabase, type TestDatabase } from '../../support/databases.js'
import { payloadBodies } from '../../support/fixtures.js'
import { bearer, startTestService, type TestService } from '../../support/service.js'

const DAY_MS = 24 * 60 * 60 * 1000

/** The checks every answer to a burst of same-key creations must pass: one resource, and no answer that differs. */
function assertOneCreated(responses: LightMyRequestResponse[], idOf: (body: Record<string, unknown>) => unknown) {
  const created = responses.filter((r) => r.statusCode === 201)
  assert.ok(created.length >= 1, responses.map((r) => `${r.statusCode} ${r.body}`).join('\n'))
  const ids = new Set(created.map((r) => idOf(r.json())))
  assert.equal(ids.size, 1, 'every 201 names the same resource')
  assert.equal(created.filter((r) => r.headers['idempotent-replayed'] !== 'true').length, 1, 'one original, the rest replays')
  for (const other of responses.filter((r) => r.statusCode !== 201)) {
    assert.equal(other.statusCode, 409, other.body)
    assert.match(other.json().error, /still in progress/)
    assert.equal(other.headers['retry-after'], '1')
  }
  return [...ids][0]
}

forEachDatabase('Idempotency-Key', (dialect) => {
  let t: TestService
  before(async () => {
    t = await startTestService(dialect, { env: { LIMITS_PRO: '{"requestsPerMinute": 100000}', LIMITS_FREE: '{"requestsPerMinute": 4}' } })
  })
  after(() => t.stop())

  const post = (apiKey: string, url: string, payload: object | string, key?: string) =>
    t.inject({
      method: 'POST',
      url: `/api/v1${url}`,
      headers: { ...bearer(apiKey), 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    })
  const db = () => t.service.ctx.storage.db
  const payloadCount = async (projectId: string) =>
    (await db().selectFrom('payloads').select('uuid').where('project_id', '=', projectId).execute()).length
  // The month's count of payloads (summed over the usage shards; project_usage holds the quota granted to them).
  const monthlyUsage = (projectId: string) => usageRepository.monthlyCount(db(), projectId, utcMonth(t.clock.now()))

  it('replays the first response to a repeat with the same key and body, with Idempotent-Replayed: true, creating nothing', async () => {
    const { apiKey, projectId } = await t.createProject('pro')
    const body = { type: 'sign', transaction: payloadBodies.sign.transaction, options: { expiresIn: 600, externalId: 'order-1' } }
    const first = await post(apiKey, '/payloads', body, 'order-1-attempt')
    assert.equal(first.statusCode, 201, first.body)
    assert.equal(first.headers['idempotent-replayed'], undefined)

    t.clock.advance(30_000)
    // The same request, its JSON laid out differently: keys in another order, other spacing.
    const relaid = `{ "options": {"externalId": "order-1", "expiresIn": 600}, "transaction": ${JSON.stringify(body.transaction)}, "type": "sign" }`
    for (const repeat of [body, relaid]) {
      const again = await post(apiKey, '/payloads', repeat, 'order-1-attempt')
      assert.equal(again.statusCode, 201, again.body)
      assert.equal(again.headers['idempotent-replayed'], 'true')
      assert.equal(again.body, first.body, 'the same body, the same uuid and timestamps')
    }
    assert.equal(await payloadCount(projectId), 1)
    assert.equal(await monthlyUsage(projectId), 1)

    // Without the key the externalId tells the application which payload it already has.
    const keyless = await post(apiKey, '/payloads', body)
    assert.equal(keyless.statusCode, 409)
    assert.equal(keyless.json().uuid, first.json().uuid)
  })

  it('refuses the same key with a different body with 422 naming the header, and creates nothing', async () => {
    const { apiKey, projectId } = await t.createProject('pro')
    assert.equal((await post(apiKey, '/payloads', payloadBodies.connect, 'k-1')).statusCode, 201)
    for (const other of [payloadBodies.signMessage, { type: 'connect', options: { expiresIn: 60 } }]) {
      const response = await post(apiKey, '/payloads', other, 'k-1')
      assert.equal(response.statusCode, 422)
      assert.equal(response.json().error, 'Idempotency-Key reused with a different request body')
      assert.equal(response.json().details[0].field, 'Idempotency-Key')
    }
    // A key names one request, whatever the endpoint.
    const onWebhooks = await post(apiKey, '/webhooks', { url: 'http://127.0.0.1:9/hook' }, 'k-1')
    assert.equal(onWebhooks.statusCode, 422)
    assert.equal(await payloadCount(projectId), 1)
    assert.equal((await db().selectFrom('webhooks').select('id').where('project_id', '=', projectId).execute()).length, 0)
  })

  it('keeps keys per project: another project with the same key gets its own payload', async () => {
    const a = await t.createProject('pro')
    const b = await t.createProject('pro')
    const fromA = await post(a.apiKey, '/payloads', payloadBodies.connect, 'shared-key')
    const fromB = await post(b.apiKey, '/payloads', payloadBodies.connect, 'shared-key')
    assert.equal(fromB.statusCode, 201)
    assert.equal(fromB.headers['idempotent-replayed'], undefined)
    assert.notEqual(fromA.json().uuid, fromB.json().uuid)
  })

  it("never hands one project another's kept response: the same key and body from another project registers its own webhook", async () => {
    const victim = await t.createProject('pro')
    const attacker = await t.createProject('pro')
    const body = { url: 'http://127.0.0.1:9/victim-hook' }
    const original = (await post(victim.apiKey, '/webhooks', body, 'predictable-key')).json()
    const stolen = await post(attacker.apiKey, '/webhooks', body, 'predictable-key')
    assert.equal(stolen.statusCode, 201)
    assert.equal(stolen.headers['idempotent-replayed'], undefined)
    assert.notEqual(stolen.json().id, original.id)
    assert.notEqual(stolen.json().secret, original.secret, "the victim's webhook secret is not replayed to another project")
  })

  it('replays a webhook registration with the same id and secret, and stores the response sealed', async () => {
    const { apiKey, projectId } = await t.createProject('pro')
    const body = { url: 'http://127.0.0.1:9/hook', events: ['payload.signed'] }
    const first = await post(apiKey, '/webhooks', body, 'hook-1')
    assert.equal(first.statusCode, 201, first.body)
    const again = await post(apiKey, '/webhooks', body, 'hook-1')
    assert.equal(again.statusCode, 201)
    assert.equal(again.headers['idempotent-replayed'], 'true')
    assert.deepEqual(again.json(), first.json())
    assert.equal((await db().selectFrom('webhooks').select('id').where('project_id', '=', projectId).execute()).length, 1)
    const rows = await db().selectFrom('idempotency_keys').selectAll().where('project_id', '=', projectId).execute()
    assert.equal(rows.length, 1)
    const secret = first.json().secret as string
    assert.equal(JSON.stringify(rows).includes(secret.slice('whsec_'.length)), false, 'the secret is not stored in the clear')
  })

  it('creates exactly one payload from concurrent requests with one key; the others get its response or 409', async () => {
    const { apiKey, projectId } = await t.createProject('pro')
    const responses = await Promise.all(Array.from({ length: 12 }, () => post(apiKey, '/payloads', payloadBodies.sign, 'burst')))
    assertOneCreated(responses, (body) => body.uuid)
    assert.equal(await payloadCount(projectId), 1)
    assert.equal(await monthlyUsage(projectId), 1)
    // Once the first has finished, every retry gets its response.
    const later = await post(apiKey, '/payloads', payloadBodies.sign, 'burst')
    assert.equal(later.headers['idempotent-replayed'], 'true')
  })

  it('counts replays against the request rate, never the monthly usage: a loop of replays is cut off with 429', async () => {
    // The Free plan here allows 4 requests a minute.
    const { apiKey, projectId } = await t.createProject('free')
    const first = await post(apiKey, '/payloads', payloadBodies.connect, 'rate-1')
    assert.equal(first.headers['x-ratelimit-remaining'], '3')
    for (const remaining of ['2', '1', '0']) {
      const replay = await post(apiKey, '/payloads', payloadBodies.connect, 'rate-1')
      assert.equal(replay.statusCode, 201, replay.body)
      assert.equal(replay.headers['idempotent-replayed'], 'true')
      assert.equal(replay.headers['x-ratelimit-remaining'], remaining)
    }
    // The attack: replaying one key in a loop, a request the rate limit never saw.
    for (let i = 0; i < 20; i++) {
      const flood = await post(apiKey, '/payloads', payloadBodies.connect, 'rate-1')
      assert.equal(flood.statusCode, 429, `replay ${i}: ${flood.body}`)
    }
    assert.equal((await post(apiKey, '/payloads', payloadBodies.connect, 'rate-2')).statusCode, 429)
    assert.equal(await monthlyUsage(projectId), 1, 'replays create nothing and use nothing of the month')

    // A minute later the kept response is still there, and requests that are not repeats are counted as usual.
    t.clock.advance(60_000)
    const later = await post(apiKey, '/payloads', payloadBodies.connect, 'rate-1')
    assert.equal(later.statusCode, 201)
    assert.equal(later.json().uuid, first.json().uuid)
    assert.equal((await post(apiKey, '/payloads', payloadBodies.signMessage, 'rate-1')).statusCode, 422)
    assert.equal((await post(apiKey, '/payloads', payloadBodies.connect, 'rate-3')).statusCode, 201)
    assert.equal((await post(apiKey, '/payloads', payloadBodies.connect, 'rate-3')).headers['x-ratelimit-remaining'], '0')
    const refused = await post(apiKey, '/payloads', payloadBodies.connect, 'rate-4')
    assert.equal(refused.statusCode, 429)
    t.clock.advance(60_000)
    const retried = await post(apiKey, '/payloads', payloadBodies.connect, 'rate-4')
    assert.equal(retried.statusCode, 201)
    assert.equal(retried.headers['idempotent-replayed'], undefined, 'the refused request left its key free')
    assert.equal(await monthlyUsage(projectId), 3)
  })

  it('keeps no failed response: a request that fails leaves the key free for its corrected retry', async () => {
    const { apiKey, projectId } = await t.createProject('free')
    const tooLong = await post(apiKey, '/payloads', { type: 'connect', options: { expiresIn: 3600 } }, 'fix-me')
    assert.equal(tooLong.statusCode, 422)
    const fixed = await post(apiKey, '/payloads', { type: 'connect', options: { expiresIn: 300 } }, 'fix-me')
    assert.equal(fixed.statusCode, 201, fixed.body)
    assert.equal(fixed.headers['idempotent-replayed'], undefined)
    const schemaInvalid = await post(apiKey, '/payloads', { type: 'connect', expires_in: 5 }, 'typo')
    assert.equal(schemaInvalid.statusCode, 422)
    assert.equal((await post(apiKey, '/payloads', { type: 'connect' }, 'typo')).statusCode, 201)
    assert.equal(await payloadCount(projectId), 2)
  })

  it('refuses a malformed key with 422 naming the header', async () => {
    const { apiKey, projectId } = await t.createProject('pro')
    for (const key of ['', 'x'.repeat(256), 'caf\u00e9', 'tab\there']) {
      const response = await post(apiKey, '/payloads', payloadBodies.connect, key)
      assert.equal(response.statusCode, 422, JSON.stringify(key))
      assert.equal(response.json().details[0].field, 'Idempotency-Key')
    }
    assert.equal((await post(apiKey, '/payloads', payloadBodies.connect, ` ${'~'.repeat(254)}`)).statusCode, 201)
    assert.equal(await payloadCount(projectId), 1)
  })

  it('keeps a key 24 hours, then treats it as new; expired keys are deleted', async () => {
    const { apiKey, projectId } = await t.createProject('pro')
    const first = (await post(apiKey, '/payloads', payloadBodies.connect, 'daily')).json().uuid
    t.clock.advance(DAY_MS - 1)
    assert.equal((await post(apiKey, '/payloads', payloadBodies.connect, 'daily')).json().uuid, first)
    t.clock.advance(1)
    const next = await post(apiKey, '/payloads', payloadBodies.connect, 'daily')
    assert.equal(next.statusCode, 201)
    assert.equal(next.headers['idempotent-replayed'], undefined)
    assert.notEqual(next.json().uuid, first)

    await post(apiKey, '/payloads', payloadBodies.connect, 'older')
    t.clock.advance(DAY_MS)
    await post(apiKey, '/payloads', payloadBodies.connect, 'younger')
    assert.ok((await idempotencyKeysRepository.deleteExpired(db(), t.clock.now())) >= 2)
    const kept = await db().selectFrom('idempotency_keys').select('key').where('project_id', '=', projectId).execute()
    assert.deepEqual(
      kept.map((row) => row.key),
      ['younger'],
    )
  })

  it('answers 409 while a claim is held by a request that never finished, and lets a retry take it over after a minute', async () => {
    const { apiKey, projectId } = await t.createProject('pro')
    // What an instance that died mid-request leaves behind: a claim without a response (made here from a real claim,
    // so that its fingerprint is the request's).
    assert.equal((await post(apiKey, '/payloads', payloadBodies.connect, 'orphan')).statusCode, 201)
    await db().deleteFrom('payloads').where('project_id', '=', projectId).execute()
    await db()
      .updateTable('idempotency_keys')
      .set({ claim_token: 'dead-instance', status_code: null, response_sealed: null, lease_expires_at: t.clock.now() + 60_000 })
      .where('project_id', '=', projectId)
      .execute()

    const busy = await post(apiKey, '/payloads', payloadBodies.connect, 'orphan')
    assert.equal(busy.statusCode, 409)
    assert.equal(busy.headers['retry-after'], '1')
    assert.equal((await post(apiKey, '/payloads', payloadBodies.signMessage, 'orphan')).statusCode, 422, 'nor may another request')
    t.clock.advance(59_999)
    assert.equal((await post(apiKey, '/payloads', payloadBodies.connect, 'orphan')).statusCode, 409)
    t.clock.advance(1)
    const taken = await post(apiKey, '/payloads', payloadBodies.connect, 'orphan')
    assert.equal(taken.statusCode, 201, taken.body)
    assert.equal(taken.headers['idempotent-replayed'], undefined)
    assert.equal((await post(apiKey, '/payloads', payloadBodies.connect, 'orphan')).headers['idempotent-replayed'], 'true')
    assert.equal(await payloadCount(projectId), 1)
  })
})

describePostgres('Idempotency-Key across two instances on one database', () => {
  let database: TestDatabase
  let one: TestService
  let two: TestService
  before(async () => {
    database = await createTestDatabase('postgres')
    const env = { LIMITS_PRO: '{"requestsPerMinute": 100000}' }
    one = await startTestService('postgres', { databaseUrl: database.url, env })
    two = await startTestService('postgres', { databaseUrl: database.url, env })
  })
  after(async () => {
    await one?.stop()
    await two?.stop()
    await database?.drop()
  })

  const post = (instance: TestService, apiKey: string, url: string, payload: object, key: string) =>
    instance.inject({ method: 'POST', url: `/api/v1${url}`, headers: { ...bearer(apiKey), 'idempotency-key': key }, payload })

  describe('concurrent requests with one key, spread over both instances', () => {
    it('create exactly one payload, and a later retry on either instance gets its response', async () => {
      const { apiKey, projectId } = await one.createProject('pro')
      for (let round = 0; round < 5; round++) {
        const key = `spread-${round}`
        const responses = await Promise.all(
          Array.from({ length: 10 }, (_, i) => post(i % 2 === 0 ? one : two, apiKey, '/payloads', payloadBodies.sign, key)),
        )
        const uuid = assertOneCreated(responses, (body) => body.uuid)
        for (const instance of [one, two]) {
          const retry = await post(instance, apiKey, '/payloads', payloadBodies.sign, key)
          assert.equal(retry.headers['idempotent-replayed'], 'true')
          assert.equal(retry.json().uuid, uuid)
        }
      }
      const rows = await one.service.ctx.storage.db.selectFrom('payloads').select('uuid').where('project_id', '=', projectId).execute()
      assert.equal(rows.length, 5)
    })

    it('register exactly one webhook', async () => {
      const { apiKey, projectId } = await two.createProject('pro')
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          post(i % 2 === 0 ? one : two, apiKey, '/webhooks', { url: 'http://127.0.0.1:9/hook' }, 'hook'),
        ),
      )
      assertOneCreated(responses, (body) => `${body.id} ${body.secret}`)
      const rows = await one.service.ctx.storage.db.selectFrom('webhooks').select('id').where('project_id', '=', projectId).execute()
      assert.equal(rows.length, 1)
    })
  })
})

describe('Idempotency-Key sent twice, over HTTP', () => {
  let t: TestService
  before(async () => {
    t = await startTestService('sqlite', { listen: true })
  })
  after(() => t.stop())

  /** A POST whose Idempotency-Key header line is sent once for each key given, as a raw client can. */
  const postWithKeys = (apiKey: string, keys: string[]) =>
    new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
      const request = httpRequest(`${t.url}/api/v1/payloads`, {
        method: 'POST',
        headers: { ...bearer(apiKey), 'content-type': 'application/json', 'idempotency-key': keys },
      })
      request.on('error', reject)
      request.on('response', async (response) => {
        let text = ''
        for await (const chunk of response) text += chunk
        resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) })
      })
      request.end(JSON.stringify(payloadBodies.connect))
    })

  it('refuses the header twice with 422, where Node would join the two into a key neither named ("a1, a2"), and creates nothing', async () => {
    const { apiKey, projectId } = await t.createProject('pro')
    const twice = await postWithKeys(apiKey, ['a1', 'a2'])
    assert.equal(twice.status, 422, JSON.stringify(twice.body))
    assert.deepEqual(twice.body.details, [{ field: 'Idempotency-Key', message: 'must be sent once' }])
    const sameTwice = await postWithKeys(apiKey, ['a1', 'a1'])
    assert.equal(sameTwice.status, 422)
    const rows = await t.service.ctx.storage.db.selectFrom('payloads').select('uuid').where('project_id', '=', projectId).execute()
    assert.equal(rows.length, 0)
    assert.equal((await postWithKeys(apiKey, ['a1, a2'])).status, 201, 'a key of its own with a comma is still a key')
  })
})
