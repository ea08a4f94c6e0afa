import assert from 'node:assert/strict'
import { performance } from 'node:perf_hooks'
import { after, afterEach, before, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { createMailTransport } from '../../../../src/features/email/mail-transport.js'
import { Mailer } from '../../../../src/features/email/mailer.js'
import { webhookDeliveriesRepository } from '../../../../src/features/webhooks/deliveries-repository.js'
import { WebhookDispatcher } from '../../../../src/features/webhooks/dispatcher/webhook-dispatcher.js'
import { forEachDatabase } from '../../../support/databases.js'
import { createPayload } from '../../../support/payloads.js'
import { bearer, startTestService, type TestService } from '../../../support/service.js'
import { type SmtpSink, startSmtpSink } from '../../../support/smtp-sink.js'
import {
  answer,
  hang,
  hasValidSignature,
  type ReceivedRequest,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../../../support/webhook-receiver.js'
import { deliveryRows, dispatchAll, registerWebhook, setAccountEmail } from '../../../support/webhooks.js'

const SECOND_MS = 1000
const HOUR_MS = 3_600_000

forEachDatabase('webhook dispatcher: retries, failures, and what stops deliveries', (dialect) => {
  let t: TestService
  let sink: SmtpSink
  let receiver: WebhookReceiver
  // No jitter (random 0.5 is the middle of the range), so that the schedule can be checked to the millisecond.
  let dispatcher: WebhookDispatcher
  before(async () => {
    sink = await startSmtpSink()
    t = await startTestService(dialect, { env: { LIMITS_PRO: '{"requestsPerMinute": 100000}', SMTP_URL: sink.url } })
    receiver = await startWebhookReceiver()
    dispatcher = new WebhookDispatcher(t.service.ctx, { random: () => 0.5, timeoutMs: 2_000 })
  })
  after(async () => {
    await receiver.close()
    await t.stop()
    await sink.close()
  })
  afterEach(async () => {
    receiver.requests.length = 0
    receiver.respondWith(answer(204))
    // Each test starts with an empty outbox: a delivery left waiting by one test must not reach the next one's receiver.
    await t.service.ctx.storage.db
      .updateTable('webhook_deliveries')
      .set({ state: 'cancelled' })
      .where('state', 'in', ['pending', 'sending'])
      .execute()
  })

  async function proProjectWithWebhook(url = receiver.url) {
    const project = await t.createProject('pro', 'Acme shop')
    const webhook = await registerWebhook(t, project.apiKey, url)
    return { ...project, webhook }
  }

  async function rejectedPayload(apiKey: string): Promise<string> {
    const uuid = await createPayload(t, apiKey)
    await t.service.ctx.payloads.reject(uuid, 'xaman')
    return uuid
  }

  it('retries a failed attempt after 10 s, not before, with the same delivery id and bytes, and then succeeds', async () => {
    const { apiKey, webhook } = await proProjectWithWebhook()
    receiver.respondWith(answer(500))
    await rejectedPayload(apiKey)
    const firstAttemptAtMs = t.clock.now()
    await dispatchAll(dispatcher)

    let [row] = await deliveryRows(t, webhook.id)
    assert.equal(row?.state, 'pending')
    assert.equal(row?.attempts, 1)
    assert.equal(row?.last_status_code, 500)
    assert.equal(row?.last_error, 'receiver answered HTTP 500')
    assert.equal(row?.next_attempt_at, firstAttemptAtMs + 10 * SECOND_MS)

    receiver.respondWith(answer(200))
    t.clock.advance(10 * SECOND_MS - 1)
    await dispatchAll(dispatcher)
    assert.equal(receiver.requests.length, 1, 'not due yet')
    t.clock.advance(1)
    await dispatchAll(dispatcher)
    assert.equal(receiver.requests.length, 2)

    ;[row] = await deliveryRows(t, webhook.id)
    assert.equal(row?.state, 'succeeded')
    assert.equal(row?.attempts, 2)
    assert.equal(row?.last_status_code, 200)
    assert.equal(row?.last_error, null)
    assert.equal(row?.completed_at, t.clock.now())
    const [first, second] = receiver.requests as [ReceivedRequest, ReceivedRequest]
    assert.equal(first.headers['x-countersign-delivery'], second.headers['x-countersign-delivery'])
    assert.deepEqual(first.rawBody, second.rawBody)
    assert.ok(hasValidSignature(first.rawBody, first.headers['x-service-signature'], webhook.secret))
    assert.ok(hasValidSignature(second.rawBody, second.headers['x-service-signature'], webhook.secret))
    assert.equal(Number(second.headers['x-countersign-timestamp']) - Number(first.headers['x-countersign-timestamp']), 10)
  })

  it("honours a receiver's Retry-After that asks for longer than the schedule", async () => {
    const { apiKey, webhook } = await proProjectWithWebhook()
    receiver.respondWith(answer(503, { 'retry-after': '120' }))
    await rejectedPayload(apiKey)
    await dispatchAll(dispatcher)
    const [row] = await deliveryRows(t, webhook.id)
    assert.equal(row?.next_attempt_at, t.clock.now() + 120 * SECOND_MS)
    t.clock.advance(60 * SECOND_MS)
    await dispatchAll(dispatcher)
    assert.equal(receiver.requests.length, 1)
    t.clock.advance(60 * SECOND_MS)
    await dispatchAll(dispatcher)
    assert.equal(receiver.requests.length, 2)
  })

  it('fails a delivery after 8 attempts spread over about a day, and mails exactly one alert to the account', async () => {
    const { apiKey, projectId, webhook } = await proProjectWithWebhook()
    await setAccountEmail(t, projectId, 'owner@acme.example')
    receiver.respondWith(answer(500))
    const payloadUuid = await rejectedPayload(apiKey)
    for (let attempt = 1; attempt <= 8; attempt++) {
      const [row] = await deliveryRows(t, webhook.id)
      t.clock.set(Math.max(t.clock.now(), row!.next_attempt_at))
      await dispatchAll(dispatcher)
      assert.equal(receiver.requests.length, attempt)
    }
    const timestamps = receiver.requests.map((r) => Number(r.headers['x-countersign-timestamp']))
    assert.deepEqual(
      timestamps.slice(1).map((s, i) => s - timestamps[i]!),
      [10, 60, 300, 1800, 7200, 21600, 43200],
      'the documented schedule, in seconds',
    )
    const [failed] = await deliveryRows(t, webhook.id)
    assert.equal(failed?.state, 'failed')
    assert.equal(failed?.attempts, 8)
    assert.equal(failed?.completed_at, t.clock.now())
    const listed = await t.inject({ method: 'GET', url: `/api/v1/webhooks/${webhook.id}/deliveries`, headers: bearer(apiKey) })
    assert.equal(listed.json().deliveries[0].nextAttemptAt, null)

    t.clock.advance(24 * HOUR_MS)
    await dispatchAll(dispatcher)
    assert.equal(receiver.requests.length, 8, 'no attempt after the last')

    const transport = createMailTransport(t.config.smtpUrl, t.service.ctx.logger)
    const mailer = new Mailer(t.service.ctx, transport)
    try {
      await mailer.sendDue()
      await mailer.sendDue()
    } finally {
      transport?.close()
    }
    const alerts = sink.caught.filter((c) => c.mail.subject?.includes('webhook delivery'))
    assert.equal(alerts.length, 1)
    const [{ mail, recipients }] = alerts as [(typeof alerts)[number]]
    assert.deepEqual(recipients, ['owner@acme.example'])
    assert.equal(mail.subject, 'Countersign: a webhook delivery for Acme shop failed')
    for (const fact of [
      projectId,
      webhook.id,
      receiver.url,
      'payload.rejected',
      payloadUuid,
      'receiver answered HTTP 500',
      'all 8 attempts',
    ]) {
      assert.ok(mail.text?.includes(fact), `the alert names ${fact}`)
    }
    const emails = await t.service.ctx.storage.db.selectFrom('emails').selectAll().where('project_id', '=', projectId).execute()
    assert.equal(emails.length, 1)
    assert.equal(emails[0]?.state, 'sent')
    assert.equal(emails[0]?.dedupe_key, `webhook-failure:${failed?.id}`)
  })

  it('tries a test delivery once: a failure is shown in its state, and no alert is mailed', async () => {
    const { apiKey, projectId, webhook } = await proProjectWithWebhook()
    await setAccountEmail(t, projectId, 'owner@acme.example')
    receiver.respondWith(answer(500))
    const queued = await t.inject({ method: 'POST', url: `/api/v1/webhooks/${webhook.id}/test`, headers: bearer(apiKey) })
    assert.equal(queued.statusCode, 202)
    await dispatchAll(dispatcher)
    t.clock.advance(24 * HOUR_MS)
    await dispatchAll(dispatcher)
    assert.equal(receiver.requests.length, 1)
    const [row] = await deliveryRows(t, webhook.id)
    assert.equal(row?.state, 'failed')
    assert.equal(row?.attempts, 1)
    const emails = await t.service.ctx.storage.db.selectFrom('emails').select('id').where('project_id', '=', projectId).execute()
    assert.equal(emails.length, 0)
  })

  it('disables a webhook whose receiver answers 410 Gone, and cancels its waiting deliveries', async () => {
    const { apiKey, webhook } = await proProjectWithWebhook()
    receiver.respondWith(answer(410))
    await rejectedPayload(apiKey)
    await rejectedPayload(apiKey)
    // One send at a time to this webhook: the second delivery is still waiting when the first meets the 410.
    await dispatchAll(new WebhookDispatcher(t.service.ctx, { random: () => 0.5, maxConcurrentSendsPerWebhook: 1 }))

    assert.equal(receiver.requests.length, 1)
    const states = (await deliveryRows(t, webhook.id)).map((r) => [r.state, r.last_status_code])
    assert.deepEqual(states.sort(), [
      ['cancelled', null],
      ['failed', 410],
    ])
    const [listed] = (await t.inject({ method: 'GET', url: '/api/v1/webhooks', headers: bearer(apiKey) })).json().webhooks
    assert.equal(listed.disabledAt, new Date(t.clock.now()).toISOString())
    assert.equal(listed.disabledReason, 'the receiver answered 410 Gone')

    await rejectedPayload(apiKey)
    assert.equal((await deliveryRows(t, webhook.id)).length, 2, 'a disabled webhook gets no new deliveries')
    const test = await t.inject({ method: 'POST', url: `/api/v1/webhooks/${webhook.id}/test`, headers: bearer(apiKey) })
    assert.equal(test.statusCode, 409)
    assert.match(test.json().error, /disabled/)
  })

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    const { apiKey, webhook } = await proProjectWithWebhook()
    const elsewhere = receiver.urlFor('/elsewhere')
    receiver.respondWith((request, res) => {
      if (request.path === '/hook') res.writeHead(307, { location: elsewhere }).end()
      else res.writeHead(204).end()
    })
    await rejectedPayload(apiKey)
    await dispatchAll(dispatcher)
    assert.deepEqual(
      receiver.requests.map((r) => r.path),
      ['/hook'],
    )
    const [row] = await deliveryRows(t, webhook.id)
    assert.equal(row?.state, 'pending')
    assert.equal(row?.last_status_code, 307)
    assert.equal(row?.last_error, `redirect to ${elsewhere} not followed`)
  })

  it('gives up on a receiver that does not answer within the timeout, and retries it later', async () => {
    const { apiKey, webhook } = await proProjectWithWebhook()
    receiver.respondWith(hang)
    await rejectedPayload(apiKey)
    const startedMs = performance.now()
    await dispatchAll(new WebhookDispatcher(t.service.ctx, { random: () => 0.5, timeoutMs: 300 }))
    const elapsedMs = performance.now() - startedMs
    assert.ok(elapsedMs >= 300 && elapsedMs < 2_000, `gave up after ${elapsedMs} ms`)
    const [row] = await deliveryRows(t, webhook.id)
    assert.equal(row?.state, 'pending')
    assert.equal(row?.attempts, 1)
    assert.equal(row?.last_status_code, null)
    assert.equal(row?.last_error, 'timed out after 300 ms')
  })

  it('keeps serving other webhooks while one receiver hangs, which holds only its own share of the sending slots', async () => {
    const healthy = await startWebhookReceiver()
    try {
      const slow = await proProjectWithWebhook()
      const fast = await proProjectWithWebhook(healthy.url)
      receiver.respondWith(hang)
      for (let i = 0; i < 12; i++) await rejectedPayload(slow.apiKey)
      for (let i = 0; i < 6; i++) await rejectedPayload(fast.apiKey)
      const capped = new WebhookDispatcher(t.service.ctx, {
        random: () => 0.5,
        timeoutMs: 2_000,
        maxHeldDeliveries: 16,
        maxConcurrentSendsPerWebhook: 4,
      })
      const startedMs = performance.now()
      // Dispatching rounds, as the worker runs them whenever a send finishes, for less than the hanging sends' timeout.
      while (healthy.requests.length < 6 && performance.now() - startedMs < 1_500) {
        await capped.dispatchDue()
        await sleep(10)
      }
      assert.equal(healthy.requests.length, 6, 'the healthy receiver was served while the other hung')
      assert.equal(receiver.requests.length, 4, 'the hanging receiver holds at most its per-webhook share of sends')
      // Stopping hands back the claimed deliveries still waiting for a slot, and waits for the four hanging sends.
      await capped.stop()
      const slowStates = (await deliveryRows(t, slow.webhook.id)).map((r) => `${r.state}/${r.attempts}`)
      assert.equal(slowStates.filter((s) => s === 'pending/1').length, 4, 'timed out once, to be retried')
      assert.equal(slowStates.filter((s) => s === 'pending/0').length, 8, 'handed back untouched')
    } finally {
      await healthy.close()
    }
  })

  it('stops delivering to a project moved back to Free: waiting deliveries are cancelled, and no new ones are made', async () => {
    const { apiKey, projectId, webhook } = await proProjectWithWebhook()
    await rejectedPayload(apiKey)
    await t.service.ctx.projects.setPlan(projectId, 'free')
    await dispatchAll(dispatcher)
    assert.equal(receiver.requests.length, 0)
    const [row] = await deliveryRows(t, webhook.id)
    assert.equal(row?.state, 'cancelled')
    assert.equal(row?.completed_at, t.clock.now())

    await t.service.ctx.projects.setPlan(projectId, 'pro')
    await t.service.ctx.projects.setPlan(projectId, 'free')
    const uuid = await createPayload(t, apiKey)
    await t.service.ctx.payloads.reject(uuid, 'xaman')
    assert.equal((await deliveryRows(t, webhook.id)).length, 1)
  })

  it("takes over a dead dispatcher's claim once its lease expires, and the dead one cannot record over it", async () => {
    const { apiKey, webhook } = await proProjectWithWebhook()
    await rejectedPayload(apiKey)
    const { db, dialect } = t.service.ctx.storage
    const nowMs = t.clock.now()
    // A dispatcher claims the delivery and dies before sending it.
    const [stale] = await webhookDeliveriesRepository.claimDue(db, dialect, {
      nowMs,
      leaseExpiresAtMs: nowMs + 60_000,
      limit: 10,
      excludeWebhookIds: [],
    })
    assert.ok(stale)

    await dispatchAll(dispatcher)
    assert.equal(receiver.requests.length, 0, 'the claim holds during its lease')
    t.clock.advance(60_000)
    await dispatchAll(dispatcher)
    assert.equal(receiver.requests.length, 1)
    assert.equal(receiver.requests[0]?.headers['x-countersign-delivery'], stale.id)

    const late = await webhookDeliveriesRepository.complete(
      db,
      { id: stale.id, attempts: stale.attempts, leaseExpiresAtMs: stale.leaseExpiresAtMs! },
      { state: 'failed', attempts: 1, nextAttemptAtMs: nowMs, lastStatusCode: 500, lastError: 'late', completedAtMs: nowMs },
    )
    assert.equal(late, false)
    await webhookDeliveriesRepository.completeSucceeded(
      db,
      dialect,
      [{ claim: { id: stale.id, attempts: 0, leaseExpiresAtMs: stale.leaseExpiresAtMs! }, statusCode: 299 }],
      nowMs,
    )
    const [row] = await deliveryRows(t, webhook.id)
    assert.equal(row?.state, 'succeeded')
    assert.equal(row?.attempts, 1)
    assert.equal(row?.last_status_code, 204, 'the stale claim recorded nothing, failure or success')
  })
})
