import assert from 'node:assert/strict'
import { after, before, it } from 'node:test'
import { loadConfig } from '../../src/config.js'
import { type RunningService, startService } from '../../src/main.js'
import { ManualClock } from '../../src/platform/clock.js'
import { createLogger } from '../../src/platform/logger.js'
import { createTestDatabase, describePostgres, type TestDatabase } from '../support/databases.js'
import { payloadBodies } from '../support/fixtures.js'
import { bearer } from '../support/service.js'
import { type ProxiedUrl, proxied } from '../support/tcp-proxy.js'

describePostgres('PostgreSQL going away', () => {
  let database: TestDatabase
  let proxy: ProxiedUrl
  let service: RunningService
  let apiKey: string
  before(async () => {
    database = await createTestDatabase('postgres')
    proxy = await proxied(database.url, 5432)
    const config = loadConfig({ DATABASE_URL: proxy.url, PORT: '0' })
    service = await startService(config, { clock: new ManualClock(), logger: createLogger('silent'), listen: false, workers: false })
    apiKey = (await service.ctx.projects.createProject({ name: 'outage', plan: 'pro' })).key.apiKey
  })
  after(async () => {
    await service.stop()
    await proxy.close()
    await database.drop()
  })

  it('answers 503, not 500, while the database is away, and recovers by itself', async () => {
    const create = () =>
      service.app.inject({ method: 'POST', url: '/api/v1/payloads', headers: bearer(apiKey), payload: payloadBodies.connect })
    const created = [await create(), await create()]
    assert.deepEqual(
      created.map((answer) => answer.statusCode),
      [201, 201],
    )
    proxy.cut()
    const during = await create()
    assert.equal(during.statusCode, 503, during.body)
    assert.deepEqual(during.json(), { error: 'Service temporarily unavailable; retry shortly' })
    assert.equal(during.headers['retry-after'], '5')
    // Two reads of one turn, read as one group (payloads/reads.ts): each answered 503.
    const reads = await Promise.all(
      created.map((answer) =>
        service.app.inject({ method: 'GET', url: `/api/v1/payloads/${answer.json().uuid}`, headers: bearer(apiKey) }),
      ),
    )
    assert.deepEqual(
      reads.map((answer) => [answer.statusCode, answer.json().error]),
      [
        [503, 'Service temporarily unavailable; retry shortly'],
        [503, 'Service temporarily unavailable; retry shortly'],
      ],
    )
    const ready = await service.app.inject({ method: 'GET', url: '/readyz' })
    assert.equal(ready.statusCode, 503)
    proxy.restore()
    let recovered = 0
    for (let attempt = 0; attempt < 50 && recovered === 0; attempt++) {
      if ((await create()).statusCode === 201) recovered = attempt + 1
      else await new Promise((resolve) => setTimeout(resolve, 100))
    }
    assert.ok(recovered > 0, 'the service must recover without a restart')
    assert.equal((await service.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200)
  })
})
