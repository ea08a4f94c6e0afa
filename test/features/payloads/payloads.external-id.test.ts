// options.externalId and options.metadata: the application's own id and data on a payload, on every read and event.
import assert from 'node:assert/strict'
import { after, before, it } from 'node:test'
import { usageRepository } from '../../../src/features/projects/usage-repository.js'
import { WebhookDispatcher } from '../../../src/features/webhooks/dispatcher/webhook-dispatcher.js'
import { utcMonth } from '../../../src/platform/utc.js'
import { forEachDatabase } from '../../support/databases.js'
import { payloadBodies } from '../../support/fixtures.js'
import { readPayload } from '../../support/payloads.js'
import { bearer, startTestService, type TestService } from '../../support/service.js'
import { openSse } from '../../support/sse.js'
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js'
import { dispatchAll, registerWebhook, SIGNED } from '../../support/webhooks.js'

forEachDatabase('payload externalId and metadata', (dialect) => {
  let t: TestService
  let receiver: WebhookReceiver
  before(async () => {
    t = await startTestService(dialect, { listen: true, env: { LIMITS_PRO: '{"requestsPerMinute": 100000, "minPollIntervalMs": 0}' } })
    receiver = await startWebhookReceiver()
  })
  after(async () => {
    await receiver.close()
    await t.stop()
  })

  const create = (apiKey: string, body: object) =>
    t.inject({ method: 'POST', url: '/api/v1/payloads', headers: bearer(apiKey), payload: body })
  const withOptions = (options: object) => ({ ...payloadBodies.signMessage, options })
  const payloadCount = async (projectId: string) =>
    (await t.service.ctx.storage.db.selectFrom('payloads').select('uuid').where('project_id', '=', projectId).execute()).length
  // The month's count of payloads (summed over the usage shards; project_usage holds the quota granted to them).
  const monthlyUsage = (projectId: string) => usageRepository.monthlyCount(t.service.ctx.storage.db, projectId, utcMonth(t.clock.now()))

  it('returns externalId and metadata on reads, null when not given, and filters the list by externalId', async () => {
    const { apiKey } = await t.createProject('pro')
    const metadata = { orderId: 42, customer: { tier: 'gold' }, tags: ['a', 'b'], note: 'naïve ✓', gift: null }
    const created = await create(apiKey, withOptions({ externalId: 'order-42:v1.a_b', metadata }))
    assert.equal(created.statusCode, 201, created.body)
    const { uuid } = created.json()
    const plain = (await create(apiKey, payloadBodies.connect)).json().uuid

    const view = await readPayload(t, apiKey, uuid)
    assert.equal(view.externalId, 'order-42:v1.a_b')
    assert.deepEqual(view.metadata, metadata)
    const plainView = await readPayload(t, apiKey, plain)
    assert.equal(plainView.externalId, null)
    assert.equal(plainView.metadata, null)

    const listed = await t.inject({ method: 'GET', url: '/api/v1/payloads?externalId=order-42:v1.a_b', headers: bearer(apiKey) })
    assert.equal(listed.statusCode, 200)
    assert.deepEqual(
      listed.json().payloads.map((p: { uuid: string }) => p.uuid),
      [uuid],
    )
    assert.deepEqual(listed.json().payloads[0].metadata, metadata)
    const none = await t.inject({ method: 'GET', url: '/api/v1/payloads?externalId=order-43', headers: bearer(apiKey) })
    assert.deepEqual(none.json().payloads, [])
    const all = await t.inject({ method: 'GET', url: '/api/v1/payloads', headers: bearer(apiKey) })
    assert.equal(all.json().payloads.length, 2)
  })

  it('refuses a second payload with the same externalId with 409 naming the existing uuid, and creates or counts nothing', async () => {
    const { apiKey, projectId } = await t.createProject('pro')
    const first = (await create(apiKey, withOptions({ externalId: 'order-7' }))).json().uuid
    const again = await create(apiKey, { ...payloadBodies.sign, options: { externalId: 'order-7', metadata: { retry: true } } })
    assert.equal(again.statusCode, 409)
    assert.deepEqual(again.json(), { error: 'A payload with externalId "order-7" already exists in this project', uuid: first })
    assert.equal(await payloadCount(projectId), 1)
    assert.equal(await monthlyUsage(projectId), 1)

    // Unique per project: another project may use the same id.
    const other = await t.createProject('pro')
    assert.equal((await create(other.apiKey, withOptions({ externalId: 'order-7' }))).statusCode, 201)
    // And a resolved payload still holds its id.
    await t.service.ctx.payloads.reject(first, undefined)
    assert.equal((await create(apiKey, withOptions({ externalId: 'order-7' }))).json().uuid, first)
  })

  it('of concurrent creations with one externalId, exactly one succeeds and the others are told its uuid', async () => {
    const { apiKey, projectId } = await t.createProject('pro')
    const responses = await Promise.all(Array.from({ length: 8 }, () => create(apiKey, withOptions({ externalId: 'race-1' }))))
    const created = responses.filter((r) => r.statusCode === 201)
    assert.equal(created.length, 1, responses.map((r) => r.body).join('\n'))
    const uuid = created[0]?.json().uuid
    for (const refused of responses.filter((r) => r.statusCode !== 201)) {
      assert.equal(refused.statusCode, 409, refused.body)
      assert.equal(refused.json().uuid, uuid)
    }
    assert.equal(await payloadCount(projectId), 1)
    assert.equal(await monthlyUsage(projectId), 1)
  })

  it('refuses a malformed externalId or metadata with 422 naming the field, and creates nothing', async () => {
    const { apiKey, projectId } = await t.createProject('pro')
    const cases: Array<[object, string]> = [
      [{ externalId: '' }, 'options.externalId'],
      [{ externalId: 'x'.repeat(65) }, 'options.externalId'],
      [{ externalId: 'order 42' }, 'options.externalId'],
      [{ externalId: 'order/42' }, 'options.externalId'],
      [{ externalId: 'ordre-é' }, 'options.externalId'],
      [{ externalId: 42 }, 'options.externalId'],
      [{ metadata: [1, 2] }, 'options.metadata'],
      [{ metadata: 'order-42' }, 'options.metadata'],
      [{ metadata: null }, 'options.metadata'],
      [{ metadata: 7 }, 'options.metadata'],
      [{ metadata: { blob: 'x'.repeat(2048) } }, 'options.metadata'],
    ]
    for (const [options, field] of cases) {
      const response = await create(apiKey, withOptions(options))
      assert.equal(response.statusCode, 422, JSON.stringify(options))
      assert.ok(
        response.json().details.some((d: { field: string }) => d.field === field),
        `${JSON.stringify(options)}: ${response.body}`,
      )
    }
    assert.equal(await payloadCount(projectId), 0)
  })

  it('takes metadata of exactly 2048 bytes serialized (counted in UTF-8), and a 64-character externalId', async () => {
    const { apiKey } = await t.createProject('pro')
    // {"k":"…"} is 8 bytes around the value; "é" is 2 bytes of UTF-8.
    const exact = { k: 'é'.repeat(1020) }
    assert.equal(Buffer.byteLength(JSON.stringify(exact)), 2048)
    const response = await create(apiKey, withOptions({ metadata: exact, externalId: 'x'.repeat(64) }))
    assert.equal(response.statusCode, 201, response.body)
    assert.deepEqual((await readPayload(t, apiKey, response.json().uuid)).metadata, exact)
    const over = await create(apiKey, withOptions({ metadata: { k: `${'é'.repeat(1020)}x` } }))
    assert.equal(over.statusCode, 422)
    assert.match(over.json().details[0].message, /at most 2048 bytes .* got 2049/)
  })

  it('fills {externalId} in the return URL, encoded', async () => {
    const { apiKey } = await t.createProject('pro')
    const uuid = (
      await create(apiKey, withOptions({ externalId: 'order:9', returnUrl: 'https://shop.example/orders/{externalId}?p={uuid}' }))
    ).json().uuid
    const rejected = await t.inject({ method: 'POST', url: `/api/v1/sign/${uuid}/reject`, payload: { walletAdapter: 'gemwallet' } })
    assert.equal(rejected.statusCode, 200)
    assert.equal(rejected.json().redirectUrl, `https://shop.example/orders/order%3A9?p=${uuid}`)
    // Without an externalId the placeholder is left empty, like {txHash} before signing.
    const plain = (await create(apiKey, withOptions({ returnUrl: 'https://shop.example/orders/{externalId}' }))).json().uuid
    const plainRejected = await t.inject({ method: 'POST', url: `/api/v1/sign/${plain}/reject`, payload: {} })
    assert.equal(plainRejected.json().redirectUrl, 'https://shop.example/orders/')
  })

  it('carries externalId and metadata in webhook bodies and on the live stream, but not to the public signing page', async () => {
    const { apiKey } = await t.createProject('pro')
    await registerWebhook(t, apiKey, receiver.url, ['payload.signed'])
    const metadata = { orderId: 'A-1', amount: { value: '10', currency: 'EUR' } }
    const uuid = (await create(apiKey, { ...payloadBodies.sign, options: { externalId: 'order-A-1', metadata } })).json().uuid

    const stream = await openSse(`${t.url}/api/v1/payloads/${uuid}/events`, bearer(apiKey))
    const first = (await stream.nextData()) as { status: string; externalId: string; metadata: unknown }
    assert.equal(first.status, 'pending')
    assert.equal(first.externalId, 'order-A-1')
    assert.deepEqual(first.metadata, metadata)

    await t.service.ctx.payloads.resolveSigned(uuid, SIGNED)
    const signed = (await stream.nextData()) as { status: string; externalId: string; metadata: unknown }
    assert.equal(signed.status, 'signed')
    assert.deepEqual([signed.externalId, signed.metadata], ['order-A-1', metadata])
    stream.close()

    await dispatchAll(new WebhookDispatcher(t.service.ctx, { random: () => 0.5 }))
    const delivery = receiver.requests.map((r) => JSON.parse(r.rawBody.toString())).find((body) => body.payload?.uuid === uuid)
    assert.ok(delivery, 'the signed event was delivered')
    assert.equal(delivery.payload.externalId, 'order-A-1')
    assert.deepEqual(delivery.payload.metadata, metadata)

    const page = await t.inject({ method: 'GET', url: `/api/v1/sign/${uuid}` })
    assert.equal(page.statusCode, 200)
    assert.equal(page.body.includes('order-A-1'), false, "the application's id is not shown to the signer")
    assert.equal(page.body.includes('EUR'), false, "the application's metadata is not shown to the signer")
  })
})
