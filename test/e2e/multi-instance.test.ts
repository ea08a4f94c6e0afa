// Three `countersign serve` processes on one PostgreSQL database and one Redis behave as one service.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Wallet } from 'xrpl'
import { createTestDatabase, postgresSkip, type TestDatabase } from '../support/databases.js'
import { redisSkip, TEST_REDIS_URL } from '../support/redis.js'
import { createProjectWithCli, type Instance, instanceEnv, startInstance, stopInstance } from '../support/serve-process.js'
import { openSse } from '../support/sse.js'
import { signText } from '../support/wallet-signing.js'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js'

describe('three instances on one PostgreSQL and one Redis', { skip: redisSkip || postgresSkip }, () => {
  let database: TestDatabase
  let env: Record<string, string>
  const instances: Instance[] = []
  let receiver: WebhookReceiver

  const instance = (n: number) => instances[n - 1] as Instance

  before(async () => {
    database = await createTestDatabase('postgres', { empty: true })
    receiver = await startWebhookReceiver()
    env = { ...instanceEnv(database.url), REDIS_URL: TEST_REDIS_URL }
    // Started together: each migrates at start, under the migration lock, on the same empty database.
    instances.push(...(await Promise.all([startInstance(env), startInstance(env), startInstance(env)])))
  })

  after(async () => {
    await Promise.all(instances.map(stopInstance))
    await receiver?.close()
    await database?.drop()
  })

  const call = (n: number, apiKey: string, method: string, path: string, body?: object) =>
    fetch(`${instance(n).url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    })

  it('a payload created on instance 1 and approved through instance 2 is seen signed on instance 3, live and by webhook once', async () => {
    const apiKey = await createProjectWithCli(env, 'pro')
    const hook = await call(1, apiKey, 'POST', '/webhooks', { url: receiver.url })
    assert.equal(hook.status, 201)

    const message = 'Pay order #42 at Example Shop'
    const created = await call(1, apiKey, 'POST', '/payloads', { type: 'signMessage', message })
    assert.equal(created.status, 201)
    const { uuid } = (await created.json()) as { uuid: string }

    const appStream = await openSse(`${instance(3).url}/api/v1/payloads/${uuid}/events`, { authorization: `Bearer ${apiKey}` })
    const pageStream = await openSse(`${instance(3).url}/api/v1/sign/${uuid}/events`)
    assert.equal(((await appStream.nextData()) as { status: string }).status, 'pending')
    assert.equal(((await pageStream.nextData()) as { status: string }).status, 'pending')

    const wallet = Wallet.generate()
    const approved = await fetch(`${instance(2).url}/api/v1/sign/${uuid}/approve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ walletAdapter: 'developer', publicKey: wallet.publicKey, signature: signText(wallet, message) }),
    })
    assert.equal(approved.status, 200, await approved.clone().text())

    const live = (await appStream.nextData()) as { status: string; signerAddress: string }
    assert.equal(live.status, 'signed')
    assert.equal(live.signerAddress, wallet.classicAddress)
    assert.equal(((await pageStream.nextData()) as { status: string }).status, 'signed')
    assert.equal((await appStream.next()).kind, 'end')

    const read = await call(3, apiKey, 'GET', `/payloads/${uuid}`)
    assert.equal(read.status, 200)
    assert.equal(((await read.json()) as { status: string }).status, 'signed')

    // Every instance runs a webhook dispatcher; the delivery is made by one of them, once.
    await receiver.waitFor(1, 15_000)
    await new Promise((resolve) => setTimeout(resolve, 3000))
    const deliveries = receiver.requests.filter((r) => JSON.parse(r.rawBody.toString()).payload?.uuid === uuid)
    assert.equal(deliveries.length, 1)
    assert.equal(JSON.parse(deliveries[0]?.rawBody.toString() ?? '{}').event, 'payload.signed')
  })

  it("holds a Free project's 20 requests per minute across the three instances together", async () => {
    const apiKey = await createProjectWithCli(env, 'free')
    const statuses: number[] = []
    for (let i = 0; i < 26; i++) statuses.push((await call((i % 3) + 1, apiKey, 'GET', '/payloads')).status)
    assert.equal(statuses.filter((s) => s === 200).length, 20)
    assert.deepEqual(statuses.slice(20), [429, 429, 429, 429, 429, 429])
  })
})
