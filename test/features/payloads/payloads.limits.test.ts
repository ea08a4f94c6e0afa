import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { forEachDatabase } from '../../support/databases.js'
import { payloadBodies } from '../../support/fixtures.js'
import { redisSkip, TEST_REDIS_URL } from '../../support/redis.js'
import { bearer, startTestService, type TestService } from '../../support/service.js'

const LOWERED_MAX_EXPIRES_IN_SECONDS = 60

forEachDatabase('payload API under limits an operator lowered', (dialect) => {
  let t: TestService
  let free: string
  let pro: string
  before(async () => {
    t = await startTestService(dialect, { env: { LIMITS_FREE: JSON.stringify({ maxExpiresInSeconds: LOWERED_MAX_EXPIRES_IN_SECONDS }) } })
    ;({ apiKey: free } = await t.createProject('free'))
    ;({ apiKey: pro } = await t.createProject('pro'))
  })
  after(() => t.stop())

  const create = (apiKey: string, body: object) =>
    t.inject({ method: 'POST', url: '/api/v1/payloads', headers: bearer(apiKey), payload: body })
  const ttlMs = (created: { expiresAt: string; createdAt: string }) => Date.parse(created.expiresAt) - Date.parse(created.createdAt)

  it("defaults the TTL to the plan's maximum when it is below 300 seconds, and the payload expires then", async () => {
    const response = await create(free, payloadBodies.connect)
    assert.equal(response.statusCode, 201)
    const created = response.json()
    assert.equal(ttlMs(created), LOWERED_MAX_EXPIRES_IN_SECONDS * 1000)

    t.clock.advance(LOWERED_MAX_EXPIRES_IN_SECONDS * 1000)
    const read = await t.inject({ method: 'GET', url: `/api/v1/payloads/${created.uuid}`, headers: bearer(free) })
    assert.equal(read.statusCode, 200)
    assert.equal(read.json().status, 'expired')
  })

  it('takes an explicit expiresIn up to the lowered maximum and refuses one above it', async () => {
    const atMaximum = await create(free, { ...payloadBodies.connect, options: { expiresIn: LOWERED_MAX_EXPIRES_IN_SECONDS } })
    assert.equal(atMaximum.statusCode, 201)
    assert.equal(ttlMs(atMaximum.json()), LOWERED_MAX_EXPIRES_IN_SECONDS * 1000)
    const above = await create(free, { ...payloadBodies.connect, options: { expiresIn: LOWERED_MAX_EXPIRES_IN_SECONDS + 1 } })
    assert.equal(above.statusCode, 422)
    assert.deepEqual(above.json().details, [
      { field: 'options.expiresIn', message: `must be at most ${LOWERED_MAX_EXPIRES_IN_SECONDS} seconds on the Free plan` },
    ])
  })

  it('keeps the 300-second default on a plan whose maximum is above it', async () => {
    const response = await create(pro, payloadBodies.connect)
    assert.equal(response.statusCode, 201)
    assert.equal(ttlMs(response.json()), 300_000)
  })
})

for (const limiter of ['memory', 'redis'] as const) {
  describe(`payload reads with the poll gate configured off [${limiter} limiter]`, { skip: limiter === 'redis' && redisSkip }, () => {
    let t: TestService
    let pro: string
    before(async () => {
      const env: Record<string, string> = { LIMITS_PRO: JSON.stringify({ minPollIntervalMs: 0 }) }
      if (limiter === 'redis') env.REDIS_URL = TEST_REDIS_URL
      t = await startTestService('sqlite', { env })
      ;({ apiKey: pro } = await t.createProject('pro'))
    })
    after(() => t.stop())

    it('answers back-to-back reads of one payload, while the Free plan keeps its 3-second gate', async () => {
      const created = await t.inject({ method: 'POST', url: '/api/v1/payloads', headers: bearer(pro), payload: payloadBodies.connect })
      for (let read = 0; read < 3; read++) {
        const response = await t.inject({ method: 'GET', url: `/api/v1/payloads/${created.json().uuid}`, headers: bearer(pro) })
        assert.equal(response.statusCode, 200)
      }
      const { apiKey: free } = await t.createProject('free')
      const freePayload = await t.inject({ method: 'POST', url: '/api/v1/payloads', headers: bearer(free), payload: payloadBodies.connect })
      const url = `/api/v1/payloads/${freePayload.json().uuid}`
      assert.equal((await t.inject({ method: 'GET', url, headers: bearer(free) })).statusCode, 200)
      assert.equal((await t.inject({ method: 'GET', url, headers: bearer(free) })).statusCode, 429)
    })
  })
}

describe('a GET of a payload, as the instances count it in Redis', { skip: redisSkip }, () => {
  let t: TestService
  const client = new Redis(TEST_REDIS_URL, { lazyConnect: true })
  let monitor: Redis
  before(async () => {
    t = await startTestService('sqlite', { env: { REDIS_URL: TEST_REDIS_URL } })
    monitor = await client.monitor()
  })
  after(async () => {
    monitor.disconnect()
    client.disconnect()
    await t.stop()
  })

  /**
   * The commands an instance sends Redis that name `projectId` while `act` runs (MONITOR streams every command Redis
   * runs, a script's own calls too, with the source "lua").
   */
  async function commandsFor(projectId: string, act: () => Promise<unknown>): Promise<string[][]> {
    // Markers through Redis before and after the act: once MONITOR has shown one, it has shown every command Redis ran
    // before it (MONITOR's feed reaches this process on a connection of its own, after the commands' answers may have).
    const throughMonitor = async (marker: string) => {
      const shown = new Promise<void>((resolve) => {
        const onMarker = (_time: string, args: string[]) => {
          if (args.includes(marker)) {
            monitor.off('monitor', onMarker)
            resolve()
          }
        }
        monitor.on('monitor', onMarker)
      })
      await client.exists(marker)
      await Promise.race([shown, sleep(2000)])
    }
    const seen: string[][] = []
    let started = false
    const listener = (_time: string, args: string[], source: string) => {
      if (args.includes(`marker:${projectId}:before`)) started = true
      else if (started && source !== 'lua' && args.some((arg) => arg.includes(projectId))) seen.push(args)
    }
    monitor.on('monitor', listener)
    try {
      await throughMonitor(`marker:${projectId}:before`)
      await act()
      await throughMonitor(`marker:${projectId}:after`)
    } finally {
      monitor.off('monitor', listener)
    }
    return seen.filter((args) => !args.some((arg) => arg.startsWith('marker:')))
  }

  it("counts the project's rate and the payload's poll gate in one command", async () => {
    const { apiKey, projectId } = await t.createProject('free')
    const created = await t.inject({ method: 'POST', url: '/api/v1/payloads', headers: bearer(apiKey), payload: payloadBodies.connect })
    const url = `/api/v1/payloads/${created.json().uuid}`
    let read: Awaited<ReturnType<TestService['inject']>> | undefined
    const commands = await commandsFor(projectId, async () => {
      read = await t.inject({ method: 'GET', url, headers: bearer(apiKey) })
    })
    assert.equal(read?.statusCode, 200)
    assert.equal(read?.headers['x-ratelimit-remaining'], '18')
    assert.equal(commands.length, 1, `one command: ${JSON.stringify(commands)}`)
    const keys = commands[0]?.filter((arg) => arg.includes(projectId))
    assert.deepEqual(keys, [`countersign:rate:rate:${projectId}`, `countersign:rate:poll:${projectId}:${created.json().uuid}`])
    const again = await commandsFor(projectId, async () => {
      read = await t.inject({ method: 'GET', url, headers: bearer(apiKey) })
    })
    assert.equal(read?.statusCode, 429, 'the gate was counted in Redis')
    assert.equal(read?.headers['x-ratelimit-remaining'], '17')
    assert.equal(again.length, 1, `one command: ${JSON.stringify(again)}`)
  })
})
