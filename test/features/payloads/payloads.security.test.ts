import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { after, before, it } from 'node:test'
import { loadConfig } from '../../../src/config.js'
import { startService } from '../../../src/main.js'
import { ManualClock } from '../../../src/platform/clock.js'
import { createLogger } from '../../../src/platform/logger.js'
import { createTestDatabase, forEachDatabase, type TestDatabase } from '../../support/databases.js'
import { payloadBodies } from '../../support/fixtures.js'
import { bearer, startTestService, type TestService } from '../../support/service.js'

forEachDatabase('payload API, attacks and limits', (dialect) => {
  let t: TestService
  before(async () => {
    t = await startTestService(dialect, { env: { LIMITS_FREE: '{"monthlyPayloads": 10}' } })
  })
  after(() => t.stop())

  const create = (apiKey: string, body: object = payloadBodies.connect) =>
    t.inject({ method: 'POST', url: '/api/v1/payloads', headers: bearer(apiKey), payload: body })

  it('refuses a missing, malformed, unknown or revoked key with 401 and a JSON error', async () => {
    const { apiKey, projectId } = await t.createProject('pro')
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Basic dXNlcjpwYXNz' },
      { authorization: 'Bearer' },
      { authorization: `Bearer ${apiKey.slice(0, -1)}` },
      { authorization: `Bearer cs_${'A'.repeat(43)}` },
      { authorization: `Bearer ${apiKey}x` },
    ]
    for (const headers of attempts) {
      const response = await t.inject({ method: 'POST', url: '/api/v1/payloads', headers, payload: payloadBodies.connect })
      assert.equal(response.statusCode, 401, JSON.stringify(headers))
      assert.equal(typeof response.json().error, 'string')
    }
    // The two refusals a developer meets most say what to check.
    const cutShort = await create(apiKey.slice(0, -1))
    assert.deepEqual(cutShort.json(), {
      error: 'Invalid API key: a key is cs_ followed by 43 characters; check that the whole key was sent',
    })
    const unknown = await create(`cs_${'A'.repeat(43)}`)
    assert.match(unknown.json().error, /^Invalid API key: no project of this service has it\. .*make a new one in the dashboard$/)
    assert.equal((await create(apiKey)).statusCode, 201)
    const [key] = await t.service.ctx.storage.db.selectFrom('api_keys').select('id').where('project_id', '=', projectId).execute()
    await t.service.ctx.storage.db.updateTable('api_keys').set({ revoked_at: t.clock.now() }).where('id', '=', key!.id).execute()
    t.clock.advance(5000) // the key cache's lifetime: revocation is honoured within seconds
    const revoked = await create(apiKey)
    assert.equal(revoked.statusCode, 401)
    assert.deepEqual(revoked.json(), { error: 'API key has been revoked' })
  })

  it('stores keys only as hashes', async () => {
    const { apiKey } = await t.createProject()
    const rows = await t.service.ctx.storage.db.selectFrom('api_keys').selectAll().execute()
    const dump = JSON.stringify(rows)
    assert.equal(dump.includes(apiKey), false)
    assert.equal(dump.includes(apiKey.slice(3)), false)
    assert.ok(rows.some((r) => apiKey.startsWith(r.prefix) && r.prefix.length === 11))
  })

  it("never shows one project's payloads to another: 404 as if absent, and not in its list", async () => {
    const alice = await t.createProject('pro')
    const mallory = await t.createProject('pro')
    const uuid = (await create(alice.apiKey)).json().uuid
    const read = await t.inject({ method: 'GET', url: `/api/v1/payloads/${uuid}`, headers: bearer(mallory.apiKey) })
    assert.equal(read.statusCode, 404)
    assert.deepEqual(read.json(), { error: 'Payload not found' })
    const cancel = await t.inject({ method: 'DELETE', url: `/api/v1/payloads/${uuid}`, headers: bearer(mallory.apiKey) })
    assert.equal(cancel.statusCode, 404)
    const list = await t.inject({ method: 'GET', url: '/api/v1/payloads', headers: bearer(mallory.apiKey) })
    assert.deepEqual(list.json().payloads, [])
    t.clock.advance(1000)
    const own = await t.inject({ method: 'GET', url: `/api/v1/payloads/${uuid}`, headers: bearer(alice.apiKey) })
    assert.equal(own.json().status, 'pending', 'the foreign DELETE must not have cancelled it')
  })

  it('limits a Free project to 20 requests a minute across endpoints, with rate-limit headers on every response', async () => {
    const { apiKey } = await t.createProject('free')
    const uuid = (await create(apiKey)).json().uuid
    const started = t.clock.now()
    for (let i = 2; i <= 20; i++) {
      if (i % 2 === 1) t.clock.advance(3000) // the Free plan's poll interval, for the GET of one payload
      const url = i % 2 === 0 ? '/api/v1/payloads' : `/api/v1/payloads/${uuid}`
      const response = await t.inject({ method: 'GET', url, headers: bearer(apiKey) })
      assert.equal(response.statusCode, 200, `request ${i} must pass`)
      assert.equal(response.headers['x-ratelimit-limit'], '20')
      assert.equal(response.headers['x-ratelimit-remaining'], String(20 - i))
      assert.equal(response.headers['x-ratelimit-reset'], String(Math.ceil((started + 60_000 - t.clock.now()) / 1000)))
    }
    const refused = await create(apiKey)
    assert.equal(refused.statusCode, 429)
    assert.equal(refused.headers['retry-after'], String(Math.ceil((started + 60_000 - t.clock.now()) / 1000)))
    assert.equal(refused.headers['x-ratelimit-remaining'], '0')
    assert.match(refused.json().error, /20 requests per minute/)
    t.clock.set(started + 60_000)
    assert.equal((await create(apiKey)).statusCode, 201)
  })

  it('enforces the minimum poll interval per payload and names it', async () => {
    const free = await t.createProject('free')
    const uuid = (await create(free.apiKey)).json().uuid
    const poll = () => t.inject({ method: 'GET', url: `/api/v1/payloads/${uuid}`, headers: bearer(free.apiKey) })
    assert.equal((await poll()).statusCode, 200)
    t.clock.advance(1000)
    const early = await poll()
    assert.equal(early.statusCode, 429)
    assert.equal(early.headers['retry-after'], '2')
    assert.match(early.json().error, /one GET of a payload every 3 s/)
    t.clock.advance(2000)
    assert.equal((await poll()).statusCode, 200)
  })

  it('counts a read refused by validation or for a malformed id against the rate, and lets it pass no poll gate', async () => {
    const { apiKey } = await t.createProject('free')
    const uuid = (await create(apiKey)).json().uuid
    const read = (url: string) => t.inject({ method: 'GET', url, headers: bearer(apiKey) })
    const invalid = await read(`/api/v1/payloads/${uuid}?status=signed`)
    assert.equal(invalid.statusCode, 422)
    assert.deepEqual(invalid.json().details, [{ field: 'status', message: 'is not a known query parameter' }])
    assert.equal(invalid.headers['x-ratelimit-remaining'], '18', 'counted, after the creation')
    const malformed = await read('/api/v1/payloads/not-a-uuid')
    assert.equal(malformed.statusCode, 404)
    assert.equal(malformed.headers['x-ratelimit-remaining'], '17')
    const valid = await read(`/api/v1/payloads/${uuid}`)
    assert.equal(valid.statusCode, 200, 'the 422 did not shut the poll gate')
    assert.equal(valid.headers['x-ratelimit-remaining'], '16')
    assert.equal((await read(`/api/v1/payloads/${uuid}`)).statusCode, 429, 'the read did')
    const unstorable = await read('/api/v1/payloads/%00')
    assert.equal(unstorable.statusCode, 422)
    assert.deepEqual(unstorable.json().details, [{ field: 'uuid', message: 'must not contain the NUL character (U+0000)' }])
    assert.equal(unstorable.headers['x-ratelimit-remaining'], '14', 'a value refused before validation is counted too')
    const unknownAndUnstorable = await read(`/api/v1/payloads/${uuid}?x=%00`)
    assert.equal(unknownAndUnstorable.statusCode, 422)
    assert.equal(unknownAndUnstorable.headers['x-ratelimit-remaining'], '13')
    for (let i = 0; i < 13; i++) await read('/api/v1/payloads')
    for (const url of [`/api/v1/payloads/${uuid}?status=signed`, `/api/v1/payloads/${uuid}?x=%00`, '/api/v1/payloads/%00']) {
      const limited = await read(url)
      assert.equal(limited.statusCode, 429, `past the rate, the rate answers before validation: ${url}`)
      assert.match(limited.json().error, /20 requests per minute/)
    }
  })

  it('counts a HEAD of a payload as its GET, behind the same poll gate', async () => {
    const { apiKey } = await t.createProject('free')
    const uuid = (await create(apiKey)).json().uuid
    const head = () => t.inject({ method: 'HEAD', url: `/api/v1/payloads/${uuid}`, headers: bearer(apiKey) })
    const first = await head()
    assert.equal(first.statusCode, 200)
    assert.equal(first.headers['x-ratelimit-remaining'], '18')
    const early = await head()
    assert.equal(early.statusCode, 429)
    assert.equal(early.headers['x-ratelimit-remaining'], '17')
    t.clock.advance(3000)
    const get = await t.inject({ method: 'GET', url: `/api/v1/payloads/${uuid}`, headers: bearer(apiKey) })
    assert.equal(get.statusCode, 200, 'one gate for both')
    assert.equal((await head()).statusCode, 429)
  })

  it('refuses creation past the monthly limit, records one 80% warning, and counts again next month', async () => {
    const { apiKey, projectId } = await t.createProject('free')
    const db = t.service.ctx.storage.db
    const warnings = () => db.selectFrom('usage_warnings').selectAll().where('project_id', '=', projectId).execute()
    t.clock.set(Date.UTC(2026, 2, 31, 23, 0, 0))
    for (let i = 1; i <= 10; i++) {
      assert.equal((await create(apiKey)).statusCode, 201)
      if (i === 7) assert.equal((await warnings()).length, 0)
      if (i === 8) assert.equal((await warnings()).length, 1)
      t.clock.advance(3000)
    }
    const refused = await create(apiKey)
    assert.equal(refused.statusCode, 403)
    assert.match(refused.json().error, /Monthly payload limit reached: the Free plan allows 10 payloads per month/)
    const [warning] = await warnings()
    assert.deepEqual(
      { month: warning!.month, limit: warning!.limit_value, count: warning!.payload_count },
      { month: '2026-03', limit: 10, count: 8 },
    )
    t.clock.set(Date.UTC(2026, 3, 1, 0, 0, 1))
    assert.equal((await create(apiKey)).statusCode, 201)
  })

  it('of racing transitions exactly one wins', async () => {
    const { apiKey, projectId } = await t.createProject('pro')
    const payloads = t.service.ctx.payloads
    for (let round = 0; round < 5; round++) {
      const uuid = (await create(apiKey)).json().uuid
      const results = await Promise.allSettled([
        payloads.resolveSigned(uuid, { walletAdapter: 'developer', signerAddress: 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe' }),
        payloads.reject(uuid, 'developer'),
        payloads.cancel(projectId, uuid),
      ])
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1, JSON.stringify(results.map((r) => r.status)))
      // The losers learn the winner's outcome: 409 once resolved, 410 for a wallet acting on a cancelled payload.
      for (const r of results) if (r.status === 'rejected') assert.ok([409, 410].includes((r.reason as { statusCode: number }).statusCode))
    }
  })
})

forEachDatabase('logs', (dialect) => {
  let database: TestDatabase
  before(async () => {
    database = await createTestDatabase(dialect)
  })
  after(() => database.drop())

  it('never hold an API key, a sign-in token or a code, whatever the spelling of the parameter name', async () => {
    const lines: string[] = []
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk))
        done()
      },
    })
    const config = loadConfig({ DATABASE_URL: database.url, PORT: '0' })
    const service = await startService(config, {
      clock: new ManualClock(),
      logger: createLogger('info', sink),
      listen: false,
      workers: false,
    })
    const { key } = await service.ctx.projects.createProject({ name: 'Logs' })
    const secret = 'S3cr3tT0kenValue'
    try {
      for (const name of ['api%5Fkey', 'api%5fkey', '%61pi_key', 'API_KEY', 'api_key[]', 'api+key']) {
        await service.app.inject({ method: 'GET', url: `/api/v1/payloads?limit=5&${name}=${key.apiKey}` })
      }
      // A key pasted where it does not belong: a path segment (escaped or not), a parameter's name, a request id.
      await service.app.inject({ method: 'GET', url: `/api/v1/payloads/${key.apiKey}` })
      await service.app.inject({ method: 'GET', url: `/x/${encodeURIComponent(key.apiKey).replace('_', '%5F')}/y` })
      await service.app.inject({ method: 'GET', url: `/api/v1/payloads?${key.apiKey}` })
      await service.app.inject({ method: 'GET', url: `/api/v1/payloads?api_key=x&${key.apiKey}=1` })
      await service.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': key.apiKey } })
      for (const name of ['token', 'tok%65n', 'code', '%63ode', 'TOKEN']) {
        await service.app.inject({ method: 'GET', url: `/auth/local?${name}=${secret}` })
        await service.app.inject({ method: 'GET', url: `/auth/callback?state=x&${name}=${secret}` })
      }
    } finally {
      await service.stop()
    }
    const all = lines.join('')
    assert.ok(lines.filter((l) => JSON.parse(l).msg === 'request').length >= 21)
    assert.equal(all.includes(key.apiKey.slice(3)), false, 'the API key reached the log')
    assert.equal(all.includes(secret), false, 'a sign-in token or code reached the log')
    assert.ok(all.includes('"url":"/api/v1/payloads?limit=5&api_key=[redacted]"'), 'the rest of the query is still logged')
    assert.ok(all.includes('"url":"/api/v1/payloads/[redacted]"'), 'the rest of the path is still logged')
    assert.ok(all.includes('"url":"/x/[redacted]/y"'))
  })

  it('carry a request id and never an API key', async () => {
    const lines: string[] = []
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk))
        done()
      },
    })
    const config = loadConfig({ DATABASE_URL: database.url, PORT: '0' })
    const service = await startService(config, {
      clock: new ManualClock(),
      logger: createLogger('debug', sink),
      listen: false,
      workers: false,
    })
    try {
      const { key } = await service.ctx.projects.createProject({ name: 'Logs' })
      await service.app.inject({ method: 'POST', url: '/api/v1/payloads', headers: bearer(key.apiKey), payload: payloadBodies.connect })
      await service.app.inject({ method: 'GET', url: `/api/v1/payloads?api_key=${key.apiKey}`, headers: { 'x-request-id': 'trace-123' } })
      await service.app.inject({ method: 'GET', url: `/api/v1/payloads?api_key=${key.apiKey}x` })
    } finally {
      await service.stop()
    }
    const all = lines.join('')
    assert.ok(lines.length >= 3)
    assert.equal(all.includes('cs_'), false, 'no API key (or part of one) in the logs')
    const requestLines = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request')
    assert.equal(requestLines.length, 3)
    assert.ok(requestLines.every((l) => typeof l.reqId === 'string'))
    assert.ok(requestLines.some((l) => l.reqId === 'trace-123' && l.url === '/api/v1/payloads?api_key=[redacted]'))
  })
})
