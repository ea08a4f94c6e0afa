// Recovering from a receiver that was down: replaying failed deliveries, the webhook disabled after 5 days of failures
// (and its owner mailed through a real SMTP server), and enabling it again. Time moves by the manual clock.
import assert from 'node:assert/strict'
import { after, afterEach, before, it } from 'node:test'
import { createMailTransport } from '../../../src/features/email/mail-transport.js'
import { Mailer } from '../../../src/features/email/mailer.js'
import { WebhookDispatcher } from '../../../src/features/webhooks/dispatcher/webhook-dispatcher.js'
import { forEachDatabase } from '../../support/databases.js'
import { createPayload } from '../../support/payloads.js'
import { bearer, startTestService, type TestService } from '../../support/service.js'
import { type SmtpSink, startSmtpSink } from '../../support/smtp-sink.js'
import { answer, startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js'
import { deliveryRows, dispatchAll, registerWebhook, setAccountEmail } from '../../support/webhooks.js'

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS
const iso = (ms: number) => new Date(ms).toISOString()

forEachDatabase('webhooks: replay, disabling after 5 days of failures, enable', (dialect) => {
  let t: TestService
  let sink: SmtpSink
  let receiver: WebhookReceiver
  let dispatcher: WebhookDispatcher
  before(async () => {
    sink = await startSmtpSink()
    t = await startTestService(dialect, { env: { LIMITS_PRO: '{"requestsPerMinute": 1000000}', SMTP_URL: sink.url } })
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
    sink.caught.length = 0
    await t.service.ctx.storage.db
      .updateTable('webhook_deliveries')
      .set({ state: 'cancelled' })
      .where('state', 'in', ['pending', 'sending'])
      .execute()
  })

  const api = (method: 'GET' | 'POST', url: string, apiKey: string, payload?: object) =>
    t.inject({ method, url: `/api/v1${url}`, headers: bearer(apiKey), ...(payload ? { payload } : {}) })

  async function rejectedPayload(apiKey: string): Promise<string> {
    const uuid = await createPayload(t, apiKey)
    await t.service.ctx.payloads.reject(uuid, 'xaman')
    return uuid
  }

  /** Moves the clock on hour by hour for `hours`, sending what comes due; a new event every `eventEveryHours`. */
  async function runHours(apiKey: string, hours: number, eventEveryHours = 24): Promise<void> {
    for (let hour = 1; hour <= hours; hour++) {
      t.clock.advance(HOUR_MS)
      if (hour % eventEveryHours === 0) await rejectedPayload(apiKey)
      await dispatchAll(dispatcher)
    }
  }

  /** Sends every attempt of what is due now, until each has succeeded or failed for good (the schedule spans under a day). */
  async function exhaustRetries(): Promise<void> {
    await dispatchAll(dispatcher)
    await runHours('', 24, Number.POSITIVE_INFINITY)
  }

  async function webhookView(apiKey: string, id: string) {
    const listed = await api('GET', '/webhooks', apiKey)
    return listed.json().webhooks.find((w: { id: string }) => w.id === id)
  }

  async function sendMail(): Promise<void> {
    const transport = createMailTransport(t.config.smtpUrl, t.service.ctx.logger)
    const mailer = new Mailer(t.service.ctx, transport)
    try {
      await mailer.sendDue()
    } finally {
      transport?.close()
    }
  }

  it('replays the failed deliveries created since the given time, with their ids and bodies, and nothing else', async () => {
    const { apiKey } = await t.createProject('pro')
    const webhook = await registerWebhook(t, apiKey, receiver.url)
    receiver.respondWith(answer(500))
    await rejectedPayload(apiKey)
    await exhaustRetries()
    receiver.respondWith(answer(204))
    const sinceMs = t.clock.now()
    await rejectedPayload(apiKey)
    await dispatchAll(dispatcher)
    receiver.respondWith(answer(500))
    t.clock.advance(60_000)
    await rejectedPayload(apiKey)
    await exhaustRetries()
    const [early, delivered, late] = await deliveryRows(t, webhook.id)
    assert.deepEqual([early?.state, delivered?.state, late?.state], ['failed', 'succeeded', 'failed'])
    const firstBodies = new Map(receiver.requests.map((r) => [String(r.headers['webhook-id']), r.rawBody.toString('utf8')]))
    receiver.requests.length = 0
    receiver.respondWith(answer(204))

    const replay = await api('POST', `/webhooks/${webhook.id}/replay`, apiKey, { since: iso(sinceMs) })
    assert.equal(replay.statusCode, 202, replay.body)
    assert.deepEqual(replay.json(), { id: webhook.id, since: iso(sinceMs), replayed: 1 })
    await dispatchAll(dispatcher)
    assert.equal(receiver.requests.length, 1)
    const [again] = receiver.requests
    assert.equal(again?.headers['webhook-id'], late?.id, 'the same delivery id, so a receiver can deduplicate')
    assert.equal(again?.rawBody.toString('utf8'), firstBodies.get(String(late?.id)), 'the same bytes')
    const afterReplay = await deliveryRows(t, webhook.id)
    assert.deepEqual(
      afterReplay.map((row) => row.state),
      ['failed', 'succeeded', 'succeeded'],
    )

    receiver.requests.length = 0
    const everything = await api('POST', `/webhooks/${webhook.id}/replay`, apiKey, { since: iso(sinceMs - 2 * DAY_MS) })
    assert.equal(everything.json().replayed, 1, 'only the one still failed: succeeded deliveries are not sent again')
    await dispatchAll(dispatcher)
    assert.deepEqual(
      receiver.requests.map((r) => r.headers['webhook-id']),
      [early?.id],
    )
  })

  it('refuses a replay with a bad since (422), of a disabled webhook (409), or of another project (404), changing nothing', async () => {
    const { apiKey } = await t.createProject('pro')
    const webhook = await registerWebhook(t, apiKey, receiver.url)
    receiver.respondWith(answer(500))
    await rejectedPayload(apiKey)
    await exhaustRetries()
    const stateOf = async () => (await deliveryRows(t, webhook.id)).map((row) => [row.state, row.attempts])
    const before = await stateOf()

    const leapSecond = { since: '2016-12-31T23:59:60Z' }
    for (const body of [{ since: 'yesterday' }, { since: 12 }, {}, { since: iso(t.clock.now()), extra: true }, leapSecond]) {
      const response = await api('POST', `/webhooks/${webhook.id}/replay`, apiKey, body)
      assert.equal(response.statusCode, 422, JSON.stringify(body))
      assert.equal(typeof response.json().error, 'string')
    }
    const future = await api('POST', `/webhooks/${webhook.id}/replay`, apiKey, { since: iso(t.clock.now() + HOUR_MS) })
    assert.equal(future.statusCode, 422)
    assert.deepEqual(future.json().details, [{ field: 'since', message: 'must not be in the future' }])
    const stranger = await t.createProject('pro')
    assert.equal((await api('POST', `/webhooks/${webhook.id}/replay`, stranger.apiKey, { since: iso(0) })).statusCode, 404)

    receiver.respondWith(answer(410))
    await api('POST', `/webhooks/${webhook.id}/test`, apiKey)
    await dispatchAll(dispatcher)
    const disabled = await api('POST', `/webhooks/${webhook.id}/replay`, apiKey, { since: iso(0) })
    assert.equal(disabled.statusCode, 409)
    assert.match(disabled.json().error, new RegExp(`enable it with POST /api/v1/webhooks/${webhook.id}/enable first`))
    assert.deepEqual((await stateOf()).slice(0, before.length), before)
  })

  it('disables a webhook whose every delivery failed for 5 days, mails the owner once, and enabling it is one call', async () => {
    const { projectId, apiKey } = await t.createProject('pro', 'Acme shop')
    await setAccountEmail(t, projectId, 'owner@acme.example')
    const webhook = await registerWebhook(t, apiKey, receiver.url)
    receiver.respondWith(answer(503))
    const failingSinceMs = t.clock.now()
    await rejectedPayload(apiKey)
    await dispatchAll(dispatcher)

    // An event a day, every attempt failing: not disabled an hour before the 5 days are up.
    await runHours(apiKey, 5 * 24 - 1)
    assert.equal((await webhookView(apiKey, webhook.id)).disabledAt, undefined)
    await sendMail()
    assert.equal(sink.caught.filter((c) => c.mail.subject?.includes('disabled')).length, 0)

    // The first failure once the 5 days are up (the last attempt of the fifth day's event) disables it.
    await runHours(apiKey, 1)
    const disabledAtMs = t.clock.now()
    const view = await webhookView(apiKey, webhook.id)
    assert.equal(view.disabledAt, iso(disabledAtMs))
    assert.equal(view.disabledReason, 'every delivery failed for 5 days')
    const rows = await deliveryRows(t, webhook.id)
    assert.equal(rows.filter((row) => row.state === 'pending' || row.state === 'sending').length, 0, 'nothing waits for it')

    await sendMail()
    const notices = sink.caught.filter((c) => c.mail.subject === 'Countersign: a webhook of Acme shop was disabled')
    assert.equal(notices.length, 1)
    const [{ mail, recipients }] = notices as [(typeof notices)[number]]
    assert.deepEqual(recipients, ['owner@acme.example'])
    for (const fact of [
      projectId,
      webhook.id,
      receiver.url,
      iso(failingSinceMs),
      'receiver answered HTTP 503',
      `POST /api/v1/webhooks/${webhook.id}/enable`,
      `POST /api/v1/webhooks/${webhook.id}/replay`,
    ]) {
      assert.ok(mail.text?.includes(fact), `the notice names ${fact}`)
    }

    // While disabled: events make no deliveries, and nothing is sent.
    receiver.requests.length = 0
    await rejectedPayload(apiKey)
    await runHours(apiKey, 2, Number.POSITIVE_INFINITY)
    assert.equal(receiver.requests.length, 0)
    await sendMail()
    assert.equal(sink.caught.filter((c) => c.mail.subject?.includes('disabled')).length, 1, 'one notice')

    receiver.respondWith(answer(204))
    const enabled = await api('POST', `/webhooks/${webhook.id}/enable`, apiKey)
    assert.equal(enabled.statusCode, 200, enabled.body)
    assert.deepEqual(enabled.json(), { id: webhook.id, url: receiver.url, events: webhook.events, createdAt: iso(failingSinceMs) })
    assert.equal((await webhookView(apiKey, webhook.id)).disabledAt, undefined)
    const again = await api('POST', `/webhooks/${webhook.id}/enable`, apiKey)
    assert.equal(again.statusCode, 200, 'enabling an enabled webhook is fine')

    await rejectedPayload(apiKey)
    await dispatchAll(dispatcher)
    assert.equal(receiver.requests.length, 1, 'delivered again')
    const replay = await api('POST', `/webhooks/${webhook.id}/replay`, apiKey, { since: iso(failingSinceMs) })
    assert.equal(replay.statusCode, 202)
    assert.equal(replay.json().replayed, 5, 'the events of the 5 days, one a day, each failed')
    await dispatchAll(dispatcher)
    assert.equal(receiver.requests.length, 6)
  })

  it('does not disable a webhook whose failures were broken by one success', async () => {
    const { apiKey } = await t.createProject('pro')
    const webhook = await registerWebhook(t, apiKey, receiver.url)
    receiver.respondWith(answer(500))
    await rejectedPayload(apiKey)
    await dispatchAll(dispatcher)
    await runHours(apiKey, 4 * 24)
    receiver.respondWith(answer(204))
    await runHours(apiKey, 24)
    // Failing again from the next day's event on: after 4 days of it, 8 of the last 9 days had failures, never 5 in a row.
    receiver.respondWith(answer(500))
    await runHours(apiKey, 5 * 24)
    assert.equal((await webhookView(apiKey, webhook.id)).disabledAt, undefined)
    await runHours(apiKey, 24)
    assert.ok((await webhookView(apiKey, webhook.id)).disabledAt, 'then 5 in a row')
  })

  it('refuses enable for another project (404) and a Free project (403)', async () => {
    const owner = await t.createProject('pro')
    const webhook = await registerWebhook(t, owner.apiKey, receiver.url)
    const stranger = await t.createProject('pro')
    const free = await t.createProject('free')
    assert.equal((await api('POST', `/webhooks/${webhook.id}/enable`, stranger.apiKey)).statusCode, 404)
    assert.equal((await api('POST', `/webhooks/${webhook.id}/enable`, free.apiKey)).statusCode, 403)
    assert.equal((await api('POST', '/webhooks/wh_unknown/enable', owner.apiKey)).statusCode, 404)
  })
})
