import assert from 'node:assert/strict'
import { performance } from 'node:perf_hooks'
import { after, afterEach, before, it } from 'node:test'
import { startWebhookDispatcher } from '../../../src/features/webhooks/dispatcher/start-webhook-dispatcher.js'
import { WebhookDispatcher } from '../../../src/features/webhooks/dispatcher/webhook-dispatcher.js'
import { MAX_WEBHOOKS_PER_PROJECT } from '../../../src/features/webhooks/model.js'
import { forEachDatabase } from '../../support/databases.js'
import { NODE_NEVER_ASKED, payloadBodies } from '../../support/fixtures.js'
import { createPayload } from '../../support/payloads.js'
import { bearer, startTestService, type TestService } from '../../support/service.js'
import { hasValidSignature, type ReceivedRequest, startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js'
import { deliveryRows, dispatchAll, registerWebhook, SIGNED } from '../../support/webhooks.js'

const iso = (ms: number) => new Date(ms).toISOString()

forEachDatabase('webhooks, happy paths', (dialect) => {
  let t: TestService
  let receiver: WebhookReceiver
  let dispatcher: WebhookDispatcher
  before(async () => {
    t = await startTestService(dialect, { env: { LIMITS_PRO: '{"requestsPerMinute": 100000}', ...NODE_NEVER_ASKED } })
    receiver = await startWebhookReceiver()
    dispatcher = new WebhookDispatcher(t.service.ctx, { random: () => 0.5 })
  })
  after(async () => {
    await receiver.close()
    await t.stop()
  })
  afterEach(() => {
    receiver.requests.length = 0
  })

  const deliveriesOf = (payloadUuid: string) =>
    t.service.ctx.storage.db.selectFrom('webhook_deliveries').selectAll().where('payload_uuid', '=', payloadUuid).execute()

  const api = (method: 'GET' | 'POST' | 'DELETE', url: string, apiKey: string, payload?: object) =>
    t.inject({ method, url: `/api/v1${url}`, headers: bearer(apiKey), ...(payload ? { payload } : {}) })

  it('registers a webhook: a wh_ id, a whsec_ secret shown once, all three events by default; listed without the secret', async () => {
    const { apiKey, projectId } = await t.createProject('pro')
    const response = await api('POST', '/webhooks', apiKey, { url: receiver.url })
    assert.equal(response.statusCode, 201)
    const created = response.json()
    assert.deepEqual(Object.keys(created).sort(), ['events', 'id', 'secret', 'url'])
    assert.match(created.id, /^wh_[A-Za-z0-9_-]{22}$/)
    // Standard base64 of 32 bytes, the form the Standard Webhooks libraries decode.
    assert.match(created.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
    assert.equal(Buffer.from(created.secret.slice('whsec_'.length), 'base64').length, 32)
    assert.equal(created.url, receiver.url)
    assert.deepEqual(created.events, ['payload.signed', 'payload.rejected', 'payload.expired'])

    const listed = await api('GET', '/webhooks', apiKey)
    assert.equal(listed.statusCode, 200)
    assert.deepEqual(listed.json(), {
      webhooks: [{ id: created.id, url: receiver.url, events: created.events, createdAt: iso(t.clock.now()) }],
    })
    assert.equal(listed.body.includes(created.secret), false)

    const [row] = await t.service.ctx.storage.db.selectFrom('webhooks').selectAll().where('project_id', '=', projectId).execute()
    assert.ok(row)
    assert.equal(JSON.stringify(row).includes(created.secret.slice('whsec_'.length)), false, 'the secret is stored sealed')
  })

  it('delivers every event with the exact body of docs/interface.md §6, null for absent fields, signed with the secret', async () => {
    const { apiKey } = await t.createProject('pro')
    const webhook = await registerWebhook(t, apiKey, receiver.url)
    const createdAtMs = t.clock.now()

    const signed = await createPayload(t, apiKey, payloadBodies.sign)
    const rejected = await createPayload(t, apiKey, payloadBodies.signMessage)
    const cancelled = await createPayload(t, apiKey, payloadBodies.connect)
    const overdue = await createPayload(t, apiKey, { ...payloadBodies.signAndSubmit, options: { expiresIn: 60 } })
    t.clock.advance(5_000)
    const resolvedAtMs = t.clock.now()
    await t.service.ctx.payloads.resolveSigned(signed, SIGNED)
    await t.service.ctx.payloads.reject(rejected, 'gemwallet')
    assert.equal((await api('DELETE', `/payloads/${cancelled}`, apiKey)).statusCode, 200)
    t.clock.advance(60_000)
    const sweptAtMs = t.clock.now()
    assert.equal(await t.service.ctx.payloads.expireOverdue(), 1)
    await dispatchAll(dispatcher)

    const payload = (uuid: string, type: string, status: string, resolvedAt: number, extra: object = {}) => ({
      uuid,
      type,
      status,
      signerAddress: null,
      txHash: null,
      txBlob: null,
      walletAdapter: null,
      createdAt: iso(createdAtMs),
      resolvedAt: iso(resolvedAt),
      externalId: null,
      metadata: null,
      ...extra,
    })
    // Field order as docs/interface.md §6 lists it; the bytes received must be exactly these.
    const expected = new Map([
      [signed, { event: 'payload.signed', payload: payload(signed, 'sign', 'signed', resolvedAtMs, { ...pick(SIGNED) }) }],
      [
        rejected,
        { event: 'payload.rejected', payload: payload(rejected, 'signMessage', 'rejected', resolvedAtMs, { walletAdapter: 'gemwallet' }) },
      ],
      [cancelled, { event: 'payload.expired', payload: payload(cancelled, 'connect', 'expired', resolvedAtMs) }],
      [overdue, { event: 'payload.expired', payload: payload(overdue, 'signAndSubmit', 'expired', sweptAtMs) }],
    ])
    assert.equal(receiver.requests.length, 4)
    const rows = await deliveryRows(t, webhook.id)
    for (const request of receiver.requests) {
      const body = JSON.parse(request.rawBody.toString('utf8'))
      const want = expected.get(body.payload.uuid)
      assert.ok(want, `unexpected delivery for ${body.payload.uuid}`)
      assert.equal(request.rawBody.toString('utf8'), JSON.stringify(want))
      assert.ok(
        hasValidSignature(request.rawBody, request.headers['x-service-signature'], webhook.secret),
        'signature verifies with the secret',
      )
      assert.equal(hasValidSignature(request.rawBody, request.headers['x-service-signature'], `${webhook.secret}x`), false)
      const row = rows.find((r) => r.payload_uuid === body.payload.uuid)
      assert.ok(row)
      assert.equal(request.headers['x-countersign-delivery'], row.id)
      assert.match(row.id, /^dlv_/)
      assert.equal(request.headers['x-countersign-event'], want.event)
      assert.equal(request.headers['x-countersign-timestamp'], String(Math.floor(t.clock.now() / 1000)))
      assert.equal(request.headers['content-type'], 'application/json')
      assert.equal(request.headers['user-agent'], 'Countersign-Webhooks/1')
      assert.equal(request.path, '/hook')
      assert.equal(row.state, 'succeeded')
      assert.equal(row.attempts, 1)
      assert.equal(row.last_status_code, 204)
    }
  })

  it('sends a webhook only the events it lists; two webhooks get the same bytes under different signatures', async () => {
    const { apiKey } = await t.createProject('pro')
    const signedOnly = await registerWebhook(t, apiKey, receiver.urlFor('/signed'), ['payload.signed'])
    const others = await registerWebhook(t, apiKey, receiver.urlFor('/others'), ['payload.rejected', 'payload.expired'])
    const all = await registerWebhook(t, apiKey, receiver.urlFor('/all'))
    assert.deepEqual(others.events, ['payload.rejected', 'payload.expired'])

    const signed = await createPayload(t, apiKey)
    const rejected = await createPayload(t, apiKey)
    await t.service.ctx.payloads.resolveSigned(signed, SIGNED)
    await t.service.ctx.payloads.reject(rejected, 'xaman')
    await dispatchAll(dispatcher)

    const received = (path: string) =>
      receiver.requests.filter((r) => r.path === path).map((r) => JSON.parse(r.rawBody.toString()).event as string)
    assert.deepEqual(received('/signed'), ['payload.signed'])
    assert.deepEqual(received('/others'), ['payload.rejected'])
    assert.deepEqual(received('/all').sort(), ['payload.rejected', 'payload.signed'])

    const toSignedOnly = receiver.requests.find((r) => r.path === '/signed')!
    const toAll = receiver.requests.find((r) => r.path === '/all' && r.headers['x-countersign-event'] === 'payload.signed')!
    assert.deepEqual(toSignedOnly.rawBody, toAll.rawBody)
    assert.ok(hasValidSignature(toSignedOnly.rawBody, toSignedOnly.headers['x-service-signature'], signedOnly.secret))
    assert.ok(hasValidSignature(toAll.rawBody, toAll.headers['x-service-signature'], all.secret))
    assert.notEqual(toSignedOnly.headers['x-countersign-delivery'], toAll.headers['x-countersign-delivery'])
  })

  it('gives each webhook of a project at its limit its own delivery of one event, each with an id of its own', async () => {
    const { apiKey, projectId } = await t.createProject('pro')
    const webhooks = []
    for (let i = 0; i < MAX_WEBHOOKS_PER_PROJECT; i++) webhooks.push(await registerWebhook(t, apiKey, receiver.urlFor(`/hook-${i}`)))
    const neighbour = await t.createProject('pro')
    await registerWebhook(t, neighbour.apiKey, receiver.urlFor('/neighbour'))
    const uuid = await createPayload(t, apiKey)
    const rejection = await t.inject({ method: 'POST', url: `/api/v1/sign/${uuid}/reject`, payload: { walletAdapter: 'gemwallet' } })
    assert.equal(rejection.statusCode, 200, rejection.body)

    const rows = await deliveriesOf(uuid)
    assert.deepEqual(rows.map((row) => row.webhook_id).sort(), webhooks.map((webhook) => webhook.id).sort())
    assert.ok(rows.every((row) => row.project_id === projectId))
    assert.equal(new Set(rows.map((row) => row.id)).size, MAX_WEBHOOKS_PER_PROJECT)
    for (const row of rows) {
      assert.match(row.id, /^dlv_[A-Za-z0-9_-]{22}$/)
      assert.deepEqual(
        { payload: row.payload_uuid, event: row.event, state: row.state, attempts: row.attempts, next: Number(row.next_attempt_at) },
        { payload: uuid, event: 'payload.rejected', state: 'pending', attempts: 0, next: t.clock.now() },
      )
    }
    await dispatchAll(dispatcher)
    assert.equal(receiver.requests.length, MAX_WEBHOOKS_PER_PROJECT)
    assert.equal(receiver.requests.filter((request) => request.path === '/neighbour').length, 0)
  })

  it('names every delivery of an event with more subscribers than the API lets a project have (rows written directly)', async () => {
    const { apiKey } = await t.createProject('pro')
    const first = await registerWebhook(t, apiKey, receiver.url)
    const db = t.service.ctx.storage.db
    const row = await db.selectFrom('webhooks').selectAll().where('id', '=', first.id).executeTakeFirstOrThrow()
    // 70: past the 64 that the last character of an id numbers alone.
    for (let i = 1; i < 70; i++)
      await db
        .insertInto('webhooks')
        .values({ ...row, id: `wh_copy${String(i).padStart(2, '0')}` })
        .execute()
    const uuid = await createPayload(t, apiKey)
    await t.service.ctx.payloads.reject(uuid, 'gemwallet')
    const ids = (await deliveriesOf(uuid)).map((delivery) => delivery.id)
    assert.equal(ids.length, 70)
    assert.equal(new Set(ids).size, 70)
    for (const id of ids) assert.match(id, /^dlv_[A-Za-z0-9_-]{22}$/)
  })

  it("lists a webhook's deliveries newest first, with their history, in pages", async () => {
    const { apiKey } = await t.createProject('pro')
    const webhook = await registerWebhook(t, apiKey, receiver.url)
    const first = await createPayload(t, apiKey)
    await t.service.ctx.payloads.reject(first, 'xaman')
    t.clock.advance(1000)
    const second = await createPayload(t, apiKey)
    await t.service.ctx.payloads.reject(second, 'xaman')
    const pendingView = (await api('GET', `/webhooks/${webhook.id}/deliveries`, apiKey)).json()
    assert.equal(pendingView.deliveries[0].state, 'pending')
    assert.equal(pendingView.deliveries[0].nextAttemptAt, iso(t.clock.now()))
    await dispatchAll(dispatcher)

    const response = await api('GET', `/webhooks/${webhook.id}/deliveries?limit=1&offset=0`, apiKey)
    assert.equal(response.statusCode, 200)
    const page = response.json()
    assert.equal(page.limit, 1)
    assert.equal(page.offset, 0)
    assert.equal(page.deliveries.length, 1)
    const [newest] = page.deliveries
    assert.deepEqual(Object.keys(newest).sort(), [
      'attempts',
      'completedAt',
      'createdAt',
      'event',
      'id',
      'lastError',
      'lastStatusCode',
      'nextAttemptAt',
      'payloadUuid',
      'state',
    ])
    assert.deepEqual(
      { ...newest, id: undefined },
      {
        id: undefined,
        event: 'payload.rejected',
        payloadUuid: second,
        state: 'succeeded',
        attempts: 1,
        lastStatusCode: 204,
        lastError: null,
        nextAttemptAt: null,
        createdAt: iso(t.clock.now()),
        completedAt: iso(t.clock.now()),
      },
    )
    assert.equal(page.hasMore, true)
    const older = (await api('GET', `/webhooks/${webhook.id}/deliveries?limit=1&offset=1`, apiKey)).json()
    assert.equal(older.deliveries[0].payloadUuid, first)
    assert.equal(older.hasMore, false)
  })

  it('retries a delivery on request: the same delivery id and the same bytes, as a new series of attempts', async () => {
    const { apiKey } = await t.createProject('pro')
    const webhook = await registerWebhook(t, apiKey, receiver.url)
    await t.service.ctx.payloads.reject(await createPayload(t, apiKey), 'xaman')
    await dispatchAll(dispatcher)
    const [delivery] = (await api('GET', `/webhooks/${webhook.id}/deliveries`, apiKey)).json().deliveries

    t.clock.advance(3_600_000)
    const retry = await api('POST', `/webhooks/${webhook.id}/deliveries/${delivery.id}/retry`, apiKey)
    assert.equal(retry.statusCode, 202)
    assert.equal(retry.json().state, 'pending')
    assert.equal(retry.json().attempts, 0)
    const again = await api('POST', `/webhooks/${webhook.id}/deliveries/${delivery.id}/retry`, apiKey)
    assert.equal(again.statusCode, 409, 'a delivery already waiting is not queued twice')
    await dispatchAll(dispatcher)

    assert.equal(receiver.requests.length, 2)
    const [original, repeat] = receiver.requests as [ReceivedRequest, ReceivedRequest]
    assert.equal(repeat.headers['x-countersign-delivery'], delivery.id)
    assert.deepEqual(repeat.rawBody, original.rawBody)
    assert.ok(hasValidSignature(repeat.rawBody, repeat.headers['x-service-signature'], webhook.secret))
    assert.equal(Number(repeat.headers['x-countersign-timestamp']) - Number(original.headers['x-countersign-timestamp']), 3600)
    const [finished] = (await api('GET', `/webhooks/${webhook.id}/deliveries`, apiKey)).json().deliveries
    assert.equal(finished.state, 'succeeded')
    assert.equal(finished.attempts, 1)
  })

  it('sends a signed test delivery: {event: "webhook.test", webhookId, createdAt}', async () => {
    const { apiKey } = await t.createProject('pro')
    const webhook = await registerWebhook(t, apiKey, receiver.url, ['payload.signed'])
    const response = await api('POST', `/webhooks/${webhook.id}/test`, apiKey)
    assert.equal(response.statusCode, 202)
    const queued = response.json()
    assert.equal(queued.event, 'webhook.test')
    assert.equal(queued.payloadUuid, null)
    assert.equal(queued.state, 'pending')
    await dispatchAll(dispatcher)

    assert.equal(receiver.requests.length, 1)
    const [request] = receiver.requests as [ReceivedRequest]
    assert.equal(
      request.rawBody.toString(),
      JSON.stringify({ event: 'webhook.test', webhookId: webhook.id, createdAt: iso(t.clock.now()) }),
    )
    assert.ok(hasValidSignature(request.rawBody, request.headers['x-service-signature'], webhook.secret))
    assert.equal(request.headers['x-countersign-event'], 'webhook.test')
    assert.equal(request.headers['x-countersign-delivery'], queued.id)
  })

  it('deletes a webhook: {id, deleted: true}; it is no longer listed, its waiting deliveries are cancelled and no new ones made', async () => {
    const { apiKey } = await t.createProject('pro')
    const kept = await registerWebhook(t, apiKey, receiver.urlFor('/kept'))
    const removed = await registerWebhook(t, apiKey, receiver.urlFor('/removed'))
    await t.service.ctx.payloads.reject(await createPayload(t, apiKey), 'xaman')

    const response = await api('DELETE', `/webhooks/${removed.id}`, apiKey)
    assert.equal(response.statusCode, 200)
    assert.deepEqual(response.json(), { id: removed.id, deleted: true })
    assert.deepEqual(
      (await api('GET', '/webhooks', apiKey)).json().webhooks.map((w: { id: string }) => w.id),
      [kept.id],
    )
    assert.equal((await api('DELETE', `/webhooks/${removed.id}`, apiKey)).statusCode, 404)
    await t.service.ctx.payloads.reject(await createPayload(t, apiKey), 'xaman')
    await dispatchAll(dispatcher)

    assert.deepEqual(
      receiver.requests.map((r) => r.path),
      ['/kept', '/kept'],
    )
    const rows = await deliveryRows(t, removed.id)
    assert.deepEqual(
      rows.map((r) => r.state),
      ['cancelled'],
    )
  })

  it('cancels the waiting deliveries of a project moved to Free: a move back to Pro before they fall due sends none of them', async () => {
    const { apiKey, projectId } = await t.createProject('pro')
    const webhook = await registerWebhook(t, apiKey, receiver.urlFor('/downgraded'))
    const other = await t.createProject('pro')
    const untouched = await registerWebhook(t, other.apiKey, receiver.urlFor('/untouched'))
    await t.service.ctx.payloads.reject(await createPayload(t, apiKey), 'xaman')
    await t.service.ctx.payloads.reject(await createPayload(t, other.apiKey), 'xaman')

    assert.equal(await t.service.ctx.projects.setPlan(projectId, 'free'), true)
    assert.equal(await t.service.ctx.projects.setPlan(projectId, 'pro'), true)
    await dispatchAll(dispatcher)

    assert.deepEqual(
      receiver.requests.map((r) => r.path),
      ['/untouched'],
    )
    assert.deepEqual(
      (await deliveryRows(t, webhook.id)).map((r) => r.state),
      ['cancelled'],
    )
    assert.deepEqual(
      (await deliveryRows(t, untouched.id)).map((r) => r.state),
      ['succeeded'],
    )
    assert.equal(await t.service.ctx.projects.setPlan('proj_none', 'free'), false)
  })

  it('sends a delivery as soon as the event commits, not at the next poll', async () => {
    const { apiKey } = await t.createProject('pro')
    const webhook = await registerWebhook(t, apiKey, receiver.url)
    // A poll interval of an hour: only the wake-up on commit can deliver within the test.
    const task = startWebhookDispatcher(t.service.ctx, { pollIntervalMs: 3_600_000 })
    const latenciesMs: number[] = []
    try {
      for (let i = 0; i < 20; i++) {
        const uuid = await createPayload(t, apiKey)
        await t.service.ctx.payloads.reject(uuid, 'xaman')
        const committedAtMs = performance.now()
        await receiver.waitFor(i + 1, 2_000)
        latenciesMs.push(receiver.requests[i]!.receivedAtMs - committedAtMs)
      }
      // A test delivery, and a retry, wake the dispatcher the same way.
      assert.equal((await api('POST', `/webhooks/${webhook.id}/test`, apiKey)).statusCode, 202)
      await receiver.waitFor(21, 2_000)
      const testDelivery = String(receiver.requests[20]!.headers['x-countersign-delivery'])
      await waitForState(testDelivery, 'succeeded')
      const retry = await api('POST', `/webhooks/${webhook.id}/deliveries/${testDelivery}/retry`, apiKey)
      assert.equal(retry.statusCode, 202)
      await receiver.waitFor(22, 2_000)
    } finally {
      await task.stop()
    }
    latenciesMs.sort((a, b) => a - b)
    assert.ok(latenciesMs[10]! < 100, `median from commit to receipt ${latenciesMs[10]} ms`)
  })

  it('sends a backlog larger than it may hold at once without waiting for the next poll', async () => {
    const { apiKey } = await t.createProject('pro')
    const webhook = await registerWebhook(t, apiKey, receiver.url)
    const before = receiver.requests.length
    const rejected: string[] = []
    for (let i = 0; i < 12; i++) {
      const uuid = await createPayload(t, apiKey)
      await t.service.ctx.payloads.reject(uuid, 'xaman')
      rejected.push(uuid)
    }
    // Twelve waiting, four held at once, and a poll interval of an hour: after the first claims, the rest go out only
    // because a finished send asks for more.
    const task = startWebhookDispatcher(t.service.ctx, { pollIntervalMs: 3_600_000, maxHeldDeliveries: 4 })
    try {
      await receiver.waitFor(before + 12, 2_000)
    } finally {
      await task.stop()
    }
    const received = receiver.requests.slice(before).map((request) => JSON.parse(request.rawBody.toString('utf8')).payload.uuid)
    assert.deepEqual(received.sort(), rejected.sort())
    // Stopping waits for the successes still waiting to be recorded together.
    assert.deepEqual(
      (await deliveryRows(t, webhook.id)).map((row) => row.state),
      Array(12).fill('succeeded'),
    )
  })

  it('documents every webhook operation in the OpenAPI document', async () => {
    const document = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json()
    const operations = [
      ['/api/v1/webhooks', 'post'],
      ['/api/v1/webhooks', 'get'],
      ['/api/v1/webhooks/{id}', 'delete'],
      ['/api/v1/webhooks/{id}/deliveries', 'get'],
      ['/api/v1/webhooks/{id}/deliveries/{deliveryId}/retry', 'post'],
      ['/api/v1/webhooks/{id}/test', 'post'],
    ] as const
    for (const [path, method] of operations) {
      const operation = document.paths[path]?.[method]
      assert.ok(operation, `${method} ${path}`)
      assert.match(operation.description, /Pro plan/)
      assert.ok(operation.responses['403'], `${method} ${path} documents the Free plan's 403`)
    }
    const created = document.paths['/api/v1/webhooks'].post.responses['201'].content['application/json'].schema
    assert.match(created.properties.secret.description, /shown only in this response/)
  })

  async function waitForState(deliveryId: string, state: string): Promise<void> {
    const db = t.service.ctx.storage.db
    const deadline = performance.now() + 2_000
    for (;;) {
      const row = await db.selectFrom('webhook_deliveries').select('state').where('id', '=', deliveryId).executeTakeFirst()
      if (row?.state === state) return
      assert.ok(performance.now() < deadline, `delivery ${deliveryId} is ${row?.state}, not ${state}`)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  }
})

function pick({ signerAddress, txHash, txBlob, walletAdapter }: typeof SIGNED) {
  return { signerAddress, txHash, txBlob, walletAdapter }
}
