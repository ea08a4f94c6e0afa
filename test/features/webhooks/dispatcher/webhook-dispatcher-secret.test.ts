import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { after, before, it } from 'node:test'
import { MAX_DELIVERY_ATTEMPTS, RETRY_DELAYS_MS } from '../../../../src/features/webhooks/dispatcher/retry-schedule.js'
import { WebhookDispatcher } from '../../../../src/features/webhooks/dispatcher/webhook-dispatcher.js'
import { createSecretBox } from '../../../../src/platform/crypto/secret-box.js'
import { forEachDatabase } from '../../../support/databases.js'
import { bearer, startTestService, type TestService } from '../../../support/service.js'
import { startWebhookReceiver, type WebhookReceiver } from '../../../support/webhook-receiver.js'
import { createPayload, dispatchAll, registerWebhook, setAccountEmail } from '../../../support/webhooks.js'

const UNREADABLE_SECRET = /^the webhook's secret could not be decrypted \(.*failed authentication.*\); register the webhook again$/

forEachDatabase('webhook dispatcher: a webhook secret that can no longer be decrypted', (dialect) => {
  let t: TestService
  let receiver: WebhookReceiver
  before(async () => {
    t = await startTestService(dialect, { env: { LIMITS_PRO: '{"requestsPerMinute": 100000}' } })
    receiver = await startWebhookReceiver()
  })
  after(async () => {
    await receiver.close()
    await t.stop()
  })

  async function deliveriesOf(apiKey: string, webhookId: string) {
    const response = await t.inject({ method: 'GET', url: `/api/v1/webhooks/${webhookId}/deliveries`, headers: bearer(apiKey) })
    assert.equal(response.statusCode, 200, response.body)
    return response.json().deliveries
  }

  it('fails every attempt without sending, says why, and works again once the webhook is registered again', async () => {
    const { projectId, apiKey } = await t.createProject('pro', 'Acme shop')
    await setAccountEmail(t, projectId, 'owner@acme.test')
    const stale = await registerWebhook(t, apiKey, receiver.url)
    // As after SESSION_SECRET changed: the stored secret was sealed under a server secret this service no longer has.
    await t.service.ctx.storage.db
      .updateTable('webhooks')
      .set({ secret_ciphertext: createSecretBox('the server secret before it changed').seal(stale.secret) })
      .where('id', '=', stale.id)
      .execute()
    const dispatcher = new WebhookDispatcher(t.service.ctx, { random: () => 0.5 })

    const firstUuid = await createPayload(t, apiKey)
    await t.service.ctx.payloads.reject(firstUuid, 'xaman')
    await dispatchAll(dispatcher)
    let [delivery] = await deliveriesOf(apiKey, stale.id)
    assert.equal(delivery.state, 'pending', 'the failure counts as an attempt, retried on the schedule')
    assert.equal(delivery.attempts, 1)
    assert.equal(delivery.lastStatusCode, null)
    assert.match(delivery.lastError, UNREADABLE_SECRET)

    for (const delayMs of RETRY_DELAYS_MS) {
      t.clock.advance(delayMs)
      await dispatchAll(dispatcher)
    }
    ;[delivery] = await deliveriesOf(apiKey, stale.id)
    assert.equal(delivery.state, 'failed')
    assert.equal(delivery.attempts, MAX_DELIVERY_ATTEMPTS)
    assert.equal(delivery.lastStatusCode, null)
    assert.match(delivery.lastError, UNREADABLE_SECRET)
    assert.equal(receiver.requests.length, 0, 'nothing unsigned or wrongly signed ever reaches the receiver')

    const emails = await t.service.ctx.emails.listForProject(projectId, { limit: 10, offset: 0 })
    const alert = emails.find((email) => email.kind === 'webhook_failure')
    assert.ok(alert, 'the owner is told that the delivery failed')
    assert.ok(alert.text.includes('register the webhook again'), alert.text)

    // Retrying the delivery cannot help: the secret is still unreadable.
    const retry = await t.inject({
      method: 'POST',
      url: `/api/v1/webhooks/${stale.id}/deliveries/${delivery.id}/retry`,
      headers: bearer(apiKey),
    })
    assert.equal(retry.statusCode, 202, retry.body)
    await dispatchAll(dispatcher)
    ;[delivery] = await deliveriesOf(apiKey, stale.id)
    assert.equal(delivery.attempts, 1, 'a retry starts a new series of attempts')
    assert.match(delivery.lastError, UNREADABLE_SECRET)
    assert.equal(receiver.requests.length, 0)

    const renewed = await registerWebhook(t, apiKey, receiver.url)
    const secondUuid = await createPayload(t, apiKey)
    await t.service.ctx.payloads.reject(secondUuid, 'xaman')
    await dispatchAll(dispatcher)
    const [received] = receiver.requests
    assert.equal(receiver.requests.length, 1)
    assert.equal(
      received?.headers['x-service-signature'],
      `sha256=${createHmac('sha256', renewed.secret)
        .update(received?.rawBody ?? '')
        .digest('hex')}`,
    )
    const [renewedDelivery] = await deliveriesOf(apiKey, renewed.id)
    assert.equal(renewedDelivery.state, 'succeeded')
    assert.equal(renewedDelivery.payloadUuid, secondUuid)
  })
})
