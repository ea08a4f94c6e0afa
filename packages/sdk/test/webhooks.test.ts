// The SDK's webhook calls against a running service, with real deliveries to a real receiver verified by verifyWebhook.
import assert from 'node:assert/strict'
import { after, afterEach, before, beforeEach, describe, it } from 'node:test'
import { WebhookDispatcher } from '../../../src/features/webhooks/dispatcher/webhook-dispatcher.js'
import { startTestService, type TestService } from '../../../test/support/service.js'
import { answer, type ReceivedRequest, startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.js'
import { dispatchAll } from '../../../test/support/webhooks.js'
import {
  ConflictError,
  Countersign,
  CountersignError,
  NotFoundError,
  PermissionError,
  ValidationError,
  verifyWebhook,
  WebhookVerificationError,
} from '../src/index.js'

const HOUR_MS = 3_600_000

describe('@countersign/sdk webhooks against a running service', () => {
  let t: TestService
  let receiver: WebhookReceiver
  let dispatcher: WebhookDispatcher
  let client: Countersign

  before(async () => {
    t = await startTestService('sqlite', { listen: true, env: { LIMITS_PRO: '{"requestsPerMinute": 100000}' } })
    receiver = await startWebhookReceiver()
    dispatcher = new WebhookDispatcher(t.service.ctx, { random: () => 0.5, timeoutMs: 2_000 })
  })
  after(async () => {
    await receiver.close()
    await t.stop()
  })
  afterEach(() => {
    receiver.requests.length = 0
    receiver.respondWith(answer(204))
  })
  // Each test has its own project, so that its events reach only its own webhook.
  beforeEach(async () => {
    client = new Countersign({ apiKey: (await t.createProject('pro', 'Example Shop')).apiKey, baseUrl: t.url })
  })

  /** The service's clock is a test clock: verification is told the time it signed at. */
  const verify = (request: ReceivedRequest, secret: string) =>
    verifyWebhook(request.rawBody, request.headers, secret, { now: () => t.clock.now() })

  const rejected = async () => {
    const { uuid } = await client.payloads.create({ type: 'connect' })
    await t.service.ctx.payloads.reject(uuid, 'gemwallet')
    return uuid
  }

  it('verifies a real delivery with verifyWebhook, both schemes, and refuses it once it is more than 5 minutes old', async () => {
    const webhook = await client.webhooks.create({ url: receiver.url, events: ['payload.rejected'] })
    const uuid = await rejected()
    await dispatchAll(dispatcher)
    const [request] = receiver.requests
    assert.ok(request)
    const delivery = verify(request, webhook.secret)
    assert.ok(delivery.event === 'payload.rejected')
    assert.equal(delivery.payload.uuid, uuid)
    const legacy = verifyWebhook(request.rawBody, request.headers, webhook.secret, {
      scheme: 'service-signature',
      now: () => t.clock.now(),
    })
    assert.deepEqual(legacy, delivery)

    const sixMinutesLater = () => t.clock.now() + 6 * 60_000
    for (const scheme of ['standard', 'service-signature'] as const) {
      assert.throws(
        () => verifyWebhook(request.rawBody, request.headers, webhook.secret, { scheme, now: sixMinutesLater }),
        (error: unknown) => error instanceof WebhookVerificationError && error.reason === 'timestamp_out_of_range',
      )
    }
  })

  it('lists deliveries, retries one, and sends a test event', async () => {
    const webhook = await client.webhooks.create({ url: receiver.url })
    receiver.respondWith(answer(500))
    const test = await client.webhooks.test(webhook.id)
    assert.equal(test.event, 'webhook.test')
    assert.equal(test.state, 'pending')
    await dispatchAll(dispatcher)
    const { deliveries, limit, offset } = await client.webhooks.deliveries(webhook.id, { limit: 5 })
    assert.deepEqual([limit, offset], [5, 0])
    assert.equal(deliveries.length, 1)
    const [failed] = deliveries
    assert.equal(failed?.state, 'failed')
    assert.equal(failed?.lastStatusCode, 500)

    receiver.respondWith(answer(204))
    const retried = await client.webhooks.retryDelivery(webhook.id, failed?.id ?? '')
    assert.equal(retried.id, failed?.id)
    assert.equal(retried.state, 'pending')
    const again = await client.webhooks.retryDelivery(webhook.id, failed?.id ?? '').catch((e: unknown) => e)
    assert.ok(again instanceof ConflictError, 'a delivery still waiting cannot be retried')
    await dispatchAll(dispatcher)
    assert.equal((await client.webhooks.deliveries(webhook.id)).deliveries[0]?.state, 'succeeded')
    const [first, second] = receiver.requests
    assert.equal(first?.headers['webhook-id'], second?.headers['webhook-id'])
    assert.deepEqual(verify(second as ReceivedRequest, webhook.secret), {
      event: 'webhook.test',
      webhookId: webhook.id,
      createdAt: new Date(t.clock.now()).toISOString(),
    })
  })

  it('rotates the secret: deliveries verify with the new secret, and with the old one for 24 hours', async () => {
    const webhook = await client.webhooks.create({ url: receiver.url })
    const rotated = await client.webhooks.rotateSecret(webhook.id)
    assert.equal(rotated.id, webhook.id)
    assert.notEqual(rotated.secret, webhook.secret)
    await rejected()
    await dispatchAll(dispatcher)
    const [during] = receiver.requests
    assert.ok(during)
    assert.ok(verify(during, rotated.secret))
    assert.ok(verify(during, webhook.secret))

    t.clock.advance(24 * HOUR_MS)
    await rejected()
    await dispatchAll(dispatcher)
    const later = receiver.requests[1]
    assert.ok(later)
    assert.ok(verify(later, rotated.secret))
    assert.throws(() => verify(later, webhook.secret), WebhookVerificationError)
  })

  it('replays failed deliveries since a time, and enables a disabled webhook', async () => {
    const webhook = await client.webhooks.create({ url: receiver.url })
    const sinceMs = t.clock.now()
    receiver.respondWith(answer(410))
    await rejected()
    await dispatchAll(dispatcher)
    const [disabled] = (await client.webhooks.list()).filter((w) => w.id === webhook.id)
    assert.ok(disabled?.disabledAt, 'a 410 disabled it')

    const refused = await client.webhooks.replay(webhook.id, { since: new Date(sinceMs) }).catch((e: unknown) => e)
    assert.ok(refused instanceof ConflictError)
    assert.match(refused.message, /enable it/)

    const enabled = await client.webhooks.enable(webhook.id)
    assert.equal(enabled.disabledAt, undefined)
    receiver.respondWith(answer(204))
    const replay = await client.webhooks.replay(webhook.id, { since: new Date(sinceMs) })
    assert.deepEqual(replay, { id: webhook.id, since: new Date(sinceMs).toISOString(), replayed: 1 })
    await dispatchAll(dispatcher)
    assert.equal(receiver.requests.length, 2)
    assert.equal(receiver.requests[1]?.headers['webhook-id'], receiver.requests[0]?.headers['webhook-id'])

    const future = await client.webhooks.replay(webhook.id, { since: new Date(t.clock.now() + HOUR_MS) }).catch((e: unknown) => e)
    assert.ok(future instanceof ValidationError)
    assert.deepEqual(future.details, [{ field: 'since', message: 'must not be in the future' }])
  })

  it('throws a typed error for each refusal, every one a CountersignError', async () => {
    const missing = await client.webhooks.rotateSecret('wh_unknown').catch((e: unknown) => e)
    assert.ok(missing instanceof NotFoundError && missing instanceof CountersignError)
    assert.equal(missing.status, 404)
    assert.equal(missing.message, 'Webhook not found')
    const free = new Countersign({ apiKey: (await t.createProject('free')).apiKey, baseUrl: t.url })
    const refused = await free.webhooks.enable('wh_any').catch((e: unknown) => e)
    assert.ok(refused instanceof PermissionError)
    assert.equal(refused.status, 403)
  })
})
