import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { WebhookDispatcher } from '../../../src/features/webhooks/dispatcher/webhook-dispatcher.js'
import { newId } from '../../../src/platform/crypto/ids.js'
import { createSecretBox } from '../../../src/platform/crypto/secret-box.js'
import { forEachDatabase } from '../../support/databases.js'
import { bearer, startTestService, type TestService } from '../../support/service.js'
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js'
import { createPayload, deliveryRows, dispatchAll, registerWebhook } from '../../support/webhooks.js'

const LIMITS = { LIMITS_PRO: '{"requestsPerMinute": 100000}', LIMITS_FREE: '{"requestsPerMinute": 100000}' }

forEachDatabase('webhooks, attacks and limits', (dialect) => {
  let t: TestService
  let receiver: WebhookReceiver
  before(async () => {
    t = await startTestService(dialect, { env: LIMITS })
    receiver = await startWebhookReceiver()
  })
  after(async () => {
    await receiver.close()
    await t.stop()
  })

  const api = (method: 'GET' | 'POST' | 'DELETE', url: string, apiKey: string, payload?: object) =>
    t.inject({ method, url: `/api/v1${url}`, headers: bearer(apiKey), ...(payload ? { payload } : {}) })

  const everyEndpoint = (webhookId: string, deliveryId: string) =>
    [
      ['POST', '/webhooks', { url: 'https://hooks.example/countersign' }],
      ['GET', '/webhooks'],
      ['DELETE', `/webhooks/${webhookId}`],
      ['GET', `/webhooks/${webhookId}/deliveries`],
      ['POST', `/webhooks/${webhookId}/deliveries/${deliveryId}/retry`],
      ['POST', `/webhooks/${webhookId}/test`],
    ] as const

  it('refuses every webhook endpoint to a Free project with 403 "Webhooks require the Pro plan", whatever the id', async () => {
    const free = await t.createProject('free')
    const pro = await t.createProject('pro')
    const webhook = await registerWebhook(t, pro.apiKey, receiver.url)
    for (const [webhookId, deliveryId] of [
      [webhook.id, newId('dlv')],
      ['wh_unknown', 'dlv_unknown'],
    ]) {
      for (const [method, url, payload] of everyEndpoint(webhookId!, deliveryId!)) {
        const response = await api(method, url, free.apiKey, payload)
        assert.equal(response.statusCode, 403, `${method} ${url}`)
        assert.deepEqual(response.json(), { error: 'Webhooks require the Pro plan' })
      }
    }
    assert.equal(
      (await t.service.ctx.storage.db.selectFrom('webhooks').select('id').where('project_id', '=', free.projectId).execute()).length,
      0,
    )
  })

  it("answers 404 for another project's webhook, as for an unknown one, and leaves it untouched", async () => {
    const alice = await t.createProject('pro')
    const mallory = await t.createProject('pro')
    const webhook = await registerWebhook(t, alice.apiKey, receiver.url)
    await t.service.ctx.payloads.reject(await createPayload(t, alice.apiKey), 'xaman')
    const [delivery] = await deliveryRows(t, webhook.id)
    assert.ok(delivery)

    for (const webhookId of [webhook.id, 'wh_unknown']) {
      for (const [method, url] of everyEndpoint(webhookId, delivery.id).slice(2)) {
        const response = await api(method, url, mallory.apiKey)
        assert.equal(response.statusCode, 404, `${method} ${url}`)
        assert.deepEqual(response.json(), { error: 'Webhook not found' })
      }
    }
    assert.deepEqual((await api('GET', '/webhooks', mallory.apiKey)).json(), { webhooks: [] })
    assert.equal((await api('GET', '/webhooks', alice.apiKey)).json().webhooks.length, 1)
    assert.equal((await deliveryRows(t, webhook.id)).length, 1, 'no test delivery was queued by the other project')
  })

  it("answers 404 for a delivery of another webhook, even of the same project's", async () => {
    const { apiKey } = await t.createProject('pro')
    const first = await registerWebhook(t, apiKey, receiver.url)
    const second = await registerWebhook(t, apiKey, receiver.urlFor('/second'))
    await t.service.ctx.payloads.reject(await createPayload(t, apiKey), 'xaman')
    const [delivery] = await deliveryRows(t, first.id)
    const response = await api('POST', `/webhooks/${second.id}/deliveries/${delivery!.id}/retry`, apiKey)
    assert.equal(response.statusCode, 404)
    assert.deepEqual(response.json(), { error: 'Delivery not found' })
  })

  it('validates the registration: an http(s) URL, and a non-empty list of distinct known events', async () => {
    const { apiKey } = await t.createProject('pro')
    const cases: Array<[object, string]> = [
      [{}, 'url'],
      [{ url: 'ftp://hooks.example/' }, 'url'],
      [{ url: 'not a url' }, 'url'],
      [{ url: 'https://user:pass@hooks.example/' }, 'url'],
      [{ url: receiver.url, events: [] }, 'events'],
      [{ url: receiver.url, events: ['payload.signed', 'payload.signed'] }, 'events'],
      [{ url: receiver.url, events: ['payload.created'] }, 'events.0'],
      [{ url: receiver.url, secret: 'mine' }, 'secret'],
    ]
    for (const [body, field] of cases) {
      const response = await api('POST', '/webhooks', apiKey, body)
      assert.equal(response.statusCode, 422, JSON.stringify(body))
      assert.ok(
        response.json().details.some((d: { field: string }) => d.field === field),
        `${JSON.stringify(body)}: ${response.body}`,
      )
    }
  })

  it('refuses a host that does not resolve even where private targets are allowed (as this service allows them)', async () => {
    assert.equal(t.config.webhookAllowPrivateTargets, true)
    const { apiKey } = await t.createProject('pro')
    const response = await api('POST', '/webhooks', apiKey, { url: 'https://nowhere.invalid/hook' })
    assert.equal(response.statusCode, 422)
    assert.match(response.json().details[0].message, /does not resolve to any address/)
    assert.deepEqual((await api('GET', '/webhooks', apiKey)).json().webhooks, [])
  })

  it('caps a project at 10 webhooks (409 beyond), counting only those not deleted', async () => {
    const { apiKey } = await t.createProject('pro')
    const ids: string[] = []
    for (let i = 0; i < 10; i++) ids.push((await registerWebhook(t, apiKey, receiver.urlFor(`/${i}`))).id)
    const eleventh = await api('POST', '/webhooks', apiKey, { url: receiver.url })
    assert.equal(eleventh.statusCode, 409)
    assert.match(eleventh.json().error, /at most 10 webhooks/)
    assert.equal((await api('DELETE', `/webhooks/${ids[0]}`, apiKey)).statusCode, 200)
    assert.equal((await api('POST', '/webhooks', apiKey, { url: receiver.url })).statusCode, 201)
  })
})

forEachDatabase('webhooks, private targets refused', (dialect) => {
  let t: TestService
  let receiver: WebhookReceiver
  before(async () => {
    t = await startTestService(dialect, { env: { ...LIMITS, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' } })
    receiver = await startWebhookReceiver()
  })
  after(async () => {
    await receiver.close()
    await t.stop()
  })

  describe('at registration', () => {
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://localhost/hook',
      'http://[::1]/hook',
      'http://10.0.0.7/hook',
      'http://192.168.1.1/hook',
      'http://169.254.169.254/latest/meta-data/',
      'http://2130706433/hook',
      'http://[::ffff:127.0.0.1]/hook',
      // IPv6 forms that embed an IPv4 address: IPv4-compatible, NAT64, 6to4, Teredo, ISATAP.
      'http://[::127.0.0.1]:8080/hook',
      'http://[64:ff9b::7f00:1]/hook',
      'http://[64:ff9b:1::a9fe:a9fe]/hook',
      'http://[2002:7f00:1::]/hook',
      'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook',
      'http://[2606:4700::5efe:10.0.0.1]/hook',
    ]) {
      it(`refuses ${url} with 422 on field url`, async () => {
        const { apiKey } = await t.createProject('pro')
        const response = await t.inject({ method: 'POST', url: '/api/v1/webhooks', headers: bearer(apiKey), payload: { url } })
        assert.equal(response.statusCode, 422)
        const [detail] = response.json().details
        assert.equal(detail.field, 'url')
        assert.match(detail.message, /webhook targets must (be public|have a public DNS name or address)/)
        assert.match(detail.message, /WEBHOOK_ALLOW_PRIVATE_TARGETS=true/, 'names the setting a local receiver needs')
      })
    }
  })

  it('refuses at delivery a host that resolves to a private address now (as after a DNS change), and the receiver gets nothing', async () => {
    const { apiKey, projectId } = await t.createProject('pro')
    const port = new URL(receiver.url).port
    // Stored directly: at registration the name would have had to resolve to a public address.
    const webhookId = newId('wh')
    await t.service.ctx.storage.db
      .insertInto('webhooks')
      .values({
        id: webhookId,
        project_id: projectId,
        url: `http://localhost:${port}/hook`,
        secret_ciphertext: createSecretBox(t.service.ctx.serverSecret).seal('whsec_x'),
        events_json: JSON.stringify(['payload.rejected']),
        created_at: t.clock.now(),
        disabled_at: null,
        disabled_reason: null,
        deleted_at: null,
      })
      .execute()
    await t.service.ctx.payloads.reject(await createPayload(t, apiKey), 'xaman')
    await dispatchAll(new WebhookDispatcher(t.service.ctx, { random: () => 0.5 }))

    assert.equal(receiver.requests.length, 0)
    const [row] = await deliveryRows(t, webhookId)
    assert.equal(row?.state, 'pending', 'a refused connection is a failed attempt, retried on the schedule')
    assert.equal(row?.attempts, 1)
    // The delivery record, which the project reads, says that the name resolved to no public address, never which.
    assert.equal(
      row?.last_error,
      'refused to connect to localhost: it does not resolve to a public address; webhook targets must be public',
    )
  })
})
