// Standard Webhooks, checked as receivers check it: real deliveries verified by the `standardwebhooks` and `svix`
// libraries, unchanged, and secret rotation with its 24 hours of two signatures.
import assert from 'node:assert/strict'
import { after, afterEach, before, it } from 'node:test'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import { Webhook as SvixWebhook } from 'svix'
import { WebhookDispatcher } from '../../../src/features/webhooks/dispatcher/webhook-dispatcher.js'
import { ManualClock } from '../../../src/platform/clock.js'
import { newId } from '../../../src/platform/crypto/ids.js'
import { createSecretBox } from '../../../src/platform/crypto/secret-box.js'
import { forEachDatabase } from '../../support/databases.js'
import { createPayload } from '../../support/payloads.js'
import { bearer, startTestService, type TestService } from '../../support/service.js'
import {
  answer,
  hasValidSignature,
  type ReceivedRequest,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../../support/webhook-receiver.js'
import { deliveryRows, dispatchAll, registerWebhook } from '../../support/webhooks.js'

const MINUTE_MS = 60_000
const HOUR_MS = 60 * MINUTE_MS

/** The headers as the libraries take them: a plain record of strings. */
function headersOf(request: ReceivedRequest): Record<string, string> {
  return Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]))
}

/** The libraries check the timestamp against the real time, so the service's clock starts at the real time here. */
const realNow = () => new ManualClock(Date.now())

forEachDatabase('Standard Webhooks: deliveries verified by the standardwebhooks and svix libraries', (dialect) => {
  let t: TestService
  let receiver: WebhookReceiver
  let dispatcher: WebhookDispatcher
  before(async () => {
    t = await startTestService(dialect, { clock: realNow(), env: { LIMITS_PRO: '{"requestsPerMinute": 100000}' } })
    receiver = await startWebhookReceiver()
    dispatcher = new WebhookDispatcher(t.service.ctx, { random: () => 0.5 })
  })
  after(async () => {
    await receiver.close()
    await t.stop()
  })
  afterEach(() => {
    receiver.requests.length = 0
    receiver.respondWith(answer(204))
    t.clock.set(Date.now())
  })

  const api = (method: 'GET' | 'POST', url: string, apiKey: string, payload?: object) =>
    t.inject({ method, url: `/api/v1${url}`, headers: bearer(apiKey), ...(payload ? { payload } : {}) })

  async function rejectedPayload(apiKey: string): Promise<string> {
    const uuid = await createPayload(t, apiKey)
    await t.service.ctx.payloads.reject(uuid, 'xaman')
    return uuid
  }

  it('signs every delivery so that both libraries verify it unchanged, with webhook-id the delivery id', async () => {
    const { apiKey } = await t.createProject('pro')
    const webhook = await registerWebhook(t, apiKey, receiver.url)
    const uuid = await rejectedPayload(apiKey)
    await dispatchAll(dispatcher)

    const [request] = receiver.requests
    assert.ok(request)
    const [row] = await deliveryRows(t, webhook.id)
    assert.equal(request.headers['webhook-id'], row?.id)
    assert.equal(request.headers['webhook-id'], request.headers['x-countersign-delivery'])
    assert.equal(request.headers['webhook-timestamp'], String(Math.floor(t.clock.now() / 1000)))
    assert.match(String(request.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/)

    const verified = new StandardWebhook(webhook.secret).verify(request.rawBody.toString('utf8'), headersOf(request)) as {
      payload: { uuid: string }
    }
    assert.equal(verified.payload.uuid, uuid)
    new SvixWebhook(webhook.secret).verify(request.rawBody.toString('utf8'), headersOf(request))
    // The spec's signature is still there, keyed with the same secret string.
    assert.ok(hasValidSignature(request.rawBody, request.headers['x-service-signature'], webhook.secret))
  })

  it('keeps webhook-id across the retries of a delivery, and signs each attempt with its own timestamp', async () => {
    const { apiKey } = await t.createProject('pro')
    const webhook = await registerWebhook(t, apiKey, receiver.url)
    receiver.respondWith(answer(503))
    await rejectedPayload(apiKey)
    await dispatchAll(dispatcher)
    receiver.respondWith(answer(204))
    t.clock.advance(10_000)
    await dispatchAll(dispatcher)

    const [first, second] = receiver.requests
    assert.ok(first && second)
    assert.equal(first.headers['webhook-id'], second.headers['webhook-id'])
    assert.equal(Number(second.headers['webhook-timestamp']) - Number(first.headers['webhook-timestamp']), 10)
    assert.notEqual(first.headers['webhook-signature'], second.headers['webhook-signature'])
    for (const request of [first, second]) new StandardWebhook(webhook.secret).verify(request.rawBody.toString('utf8'), headersOf(request))
  })

  it('is refused by the libraries when the body, the id or the timestamp was altered, or the secret is another', async () => {
    const { apiKey } = await t.createProject('pro')
    const webhook = await registerWebhook(t, apiKey, receiver.url)
    await rejectedPayload(apiKey)
    await dispatchAll(dispatcher)
    const [request] = receiver.requests
    assert.ok(request)
    const body = request.rawBody.toString('utf8')
    const headers = headersOf(request)
    const library = new StandardWebhook(webhook.secret)

    assert.throws(() => library.verify(body.replace('"rejected"', '"signed"'), headers), /No matching signature/)
    assert.throws(() => library.verify(body, { ...headers, 'webhook-id': 'dlv_another' }), /No matching signature/)
    const earlier = String(Number(headers['webhook-timestamp']) - 1)
    assert.throws(() => library.verify(body, { ...headers, 'webhook-timestamp': earlier }), /No matching signature/)
    const other = await registerWebhook(t, apiKey, receiver.urlFor('/other'))
    assert.throws(() => new StandardWebhook(other.secret).verify(body, headers), /No matching signature/)
    assert.throws(() => new SvixWebhook(other.secret).verify(body, headers), /No matching signature/)
  })

  it('an attacker who captured a delivery cannot replay it minutes later: the signed timestamp is too old', async () => {
    const { apiKey } = await t.createProject('pro')
    const webhook = await registerWebhook(t, apiKey, receiver.url)
    // The delivery was captured 10 minutes ago; it is sent again, headers and all, now.
    t.clock.set(Date.now() - 10 * MINUTE_MS)
    await rejectedPayload(apiKey)
    await dispatchAll(dispatcher)
    const [captured] = receiver.requests
    assert.ok(captured)
    const body = captured.rawBody.toString('utf8')
    assert.throws(() => new StandardWebhook(webhook.secret).verify(body, headersOf(captured)), /timestamp too old/)
    assert.throws(() => new SvixWebhook(webhook.secret).verify(body, headersOf(captured)), /timestamp too old/)
    // Moving the timestamp forward breaks the signature instead.
    const fresh = { ...headersOf(captured), 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) }
    assert.throws(() => new StandardWebhook(webhook.secret).verify(body, fresh), /No matching signature/)
  })

  it('keeps a secret issued before Standard Webhooks (whsec_ + base64url) working: its standard form verifies', async () => {
    const { projectId, apiKey } = await t.createProject('pro')
    const bytes = Buffer.from('fb'.repeat(32), 'hex')
    const oldSecret = `whsec_${bytes.toString('base64url')}`
    const webhookId = newId('wh')
    await t.service.ctx.storage.db
      .insertInto('webhooks')
      .values({
        id: webhookId,
        project_id: projectId,
        url: receiver.url,
        secret_ciphertext: createSecretBox(t.service.ctx.serverSecret).seal(oldSecret),
        events_json: JSON.stringify(['payload.rejected']),
        created_at: t.clock.now(),
        disabled_at: null,
        disabled_reason: null,
        deleted_at: null,
        previous_secret_ciphertext: null,
        previous_secret_expires_at: null,
        failing_since: null,
      })
      .execute()
    await rejectedPayload(apiKey)
    await dispatchAll(dispatcher)
    const [request] = receiver.requests
    assert.ok(request)
    assert.ok(hasValidSignature(request.rawBody, request.headers['x-service-signature'], oldSecret), 'X-Service-Signature as before')
    const standardForm = `whsec_${bytes.toString('base64')}`
    assert.match(oldSecret, /[-_]/)
    new StandardWebhook(standardForm).verify(request.rawBody.toString('utf8'), headersOf(request))
    new SvixWebhook(standardForm).verify(request.rawBody.toString('utf8'), headersOf(request))
  })

  it('rotates a secret: shown once; X-Service-Signature moves to it at once; webhook-signature carries both for 24 hours', async () => {
    const { apiKey } = await t.createProject('pro')
    // The rotation happens 24 hours ago, so that the end of its overlap is now and the libraries' clock agrees.
    t.clock.set(Date.now() - 24 * HOUR_MS)
    const webhook = await registerWebhook(t, apiKey, receiver.url)
    const rotated = await api('POST', `/webhooks/${webhook.id}/rotate-secret`, apiKey)
    assert.equal(rotated.statusCode, 200, rotated.body)
    const { id, secret } = rotated.json()
    assert.deepEqual(Object.keys(rotated.json()).sort(), ['id', 'secret'])
    assert.equal(id, webhook.id)
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
    assert.notEqual(secret, webhook.secret)
    const listed = await api('GET', '/webhooks', apiKey)
    assert.equal(listed.body.includes(secret), false, 'the new secret is not listed')
    const row = await t.service.ctx.storage.db.selectFrom('webhooks').selectAll().where('id', '=', webhook.id).executeTakeFirstOrThrow()
    for (const plain of [secret, webhook.secret]) {
      assert.equal(JSON.stringify(row).includes(plain.slice('whsec_'.length, 30)), false, 'both secrets are stored sealed')
    }
    assert.match(row.previous_secret_ciphertext ?? '', /^v1\./)

    t.clock.advance(24 * HOUR_MS - MINUTE_MS)
    await rejectedPayload(apiKey)
    await dispatchAll(dispatcher)
    const [during] = receiver.requests
    assert.ok(during)
    const signatures = String(during.headers['webhook-signature']).split(' ')
    assert.equal(signatures.length, 2, 'new and old, space-separated')
    assert.deepEqual(signatures, [...new Set(signatures)])
    const duringBody = during.rawBody.toString('utf8')
    for (const key of [secret, webhook.secret]) {
      new StandardWebhook(key).verify(duringBody, headersOf(during))
      new SvixWebhook(key).verify(duringBody, headersOf(during))
    }
    assert.ok(hasValidSignature(during.rawBody, during.headers['x-service-signature'], secret))
    assert.equal(hasValidSignature(during.rawBody, during.headers['x-service-signature'], webhook.secret), false)

    t.clock.advance(2 * MINUTE_MS)
    await rejectedPayload(apiKey)
    await dispatchAll(dispatcher)
    const after24Hours = receiver.requests[1]
    assert.ok(after24Hours)
    assert.equal(String(after24Hours.headers['webhook-signature']).split(' ').length, 1)
    const afterBody = after24Hours.rawBody.toString('utf8')
    new StandardWebhook(secret).verify(afterBody, headersOf(after24Hours))
    assert.throws(() => new StandardWebhook(webhook.secret).verify(afterBody, headersOf(after24Hours)), /No matching signature/)
  })

  it('a dispatcher that has signed with a secret signs with the new one from the first delivery after a rotation', async () => {
    const { apiKey } = await t.createProject('pro')
    const webhook = await registerWebhook(t, apiKey, receiver.url)
    await rejectedPayload(apiKey)
    await dispatchAll(dispatcher)
    const secret = (await api('POST', `/webhooks/${webhook.id}/rotate-secret`, apiKey)).json().secret
    await rejectedPayload(apiKey)
    await dispatchAll(dispatcher)
    const [before, after] = receiver.requests
    assert.ok(before && after)
    assert.ok(hasValidSignature(before.rawBody, before.headers['x-service-signature'], webhook.secret))
    assert.ok(hasValidSignature(after.rawBody, after.headers['x-service-signature'], secret))
    assert.equal(hasValidSignature(after.rawBody, after.headers['x-service-signature'], webhook.secret), false)
    const signatures = String(after.headers['webhook-signature']).split(' ')
    assert.equal(signatures.length, 2)
    assert.equal(
      signatures[0],
      new StandardWebhook(secret).sign(
        String(after.headers['webhook-id']),
        new Date(Number(after.headers['webhook-timestamp']) * 1000),
        after.rawBody.toString('utf8'),
      ),
    )
  })

  it('a second rotation within the 24 hours keeps only the secret it replaced beside the new one', async () => {
    const { apiKey } = await t.createProject('pro')
    const webhook = await registerWebhook(t, apiKey, receiver.url)
    const second = (await api('POST', `/webhooks/${webhook.id}/rotate-secret`, apiKey)).json().secret
    const third = (await api('POST', `/webhooks/${webhook.id}/rotate-secret`, apiKey)).json().secret
    await rejectedPayload(apiKey)
    await dispatchAll(dispatcher)
    const [request] = receiver.requests
    assert.ok(request)
    const body = request.rawBody.toString('utf8')
    assert.equal(String(request.headers['webhook-signature']).split(' ').length, 2)
    new StandardWebhook(third).verify(body, headersOf(request))
    new StandardWebhook(second).verify(body, headersOf(request))
    assert.throws(() => new StandardWebhook(webhook.secret).verify(body, headersOf(request)), /No matching signature/)
  })

  it("refuses to rotate another project's webhook (404) or a Free project's (403), and changes nothing", async () => {
    const owner = await t.createProject('pro')
    const webhook = await registerWebhook(t, owner.apiKey, receiver.url)
    const stranger = await t.createProject('pro')
    const free = await t.createProject('free')
    const before = await t.service.ctx.storage.db.selectFrom('webhooks').selectAll().where('id', '=', webhook.id).executeTakeFirstOrThrow()
    const foreign = await api('POST', `/webhooks/${webhook.id}/rotate-secret`, stranger.apiKey)
    assert.equal(foreign.statusCode, 404)
    assert.deepEqual(foreign.json(), { error: 'Webhook not found' })
    assert.equal((await api('POST', `/webhooks/${webhook.id}/rotate-secret`, free.apiKey)).statusCode, 403)
    assert.equal((await api('POST', '/webhooks/wh_unknown/rotate-secret', owner.apiKey)).statusCode, 404)
    const afterwards = await t.service.ctx.storage.db
      .selectFrom('webhooks')
      .selectAll()
      .where('id', '=', webhook.id)
      .executeTakeFirstOrThrow()
    assert.deepEqual(afterwards, before)
  })
})
