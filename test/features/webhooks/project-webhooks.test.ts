import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { WebhookDispatcher } from '../../../src/features/webhooks/dispatcher/webhook-dispatcher.js'
import { type DashboardClient, dashboardClient, signedIn } from '../../support/dashboard.js'
import { forEachDatabase } from '../../support/databases.js'
import { startTestService, type TestService } from '../../support/service.js'
import { answer, startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js'
import { dispatchAll, SIGNED } from '../../support/webhooks.js'

forEachDatabase('dashboard webhook endpoints', (dialect) => {
  let t: TestService
  let receiver: WebhookReceiver
  let dispatcher: WebhookDispatcher
  let alice: DashboardClient
  let bob: DashboardClient
  let proId: string
  let freeId: string

  before(async () => {
    t = await startTestService(dialect, { listen: true })
    receiver = await startWebhookReceiver()
    dispatcher = new WebhookDispatcher(t.service.ctx)
    alice = await signedIn(t, 'alice')
    bob = await signedIn(t, 'bob')
    const ctx = t.service.ctx
    proId = (await ctx.projects.createProject({ name: 'Pro shop', plan: 'pro', accountId: alice.accountId })).project.id
    freeId = (await ctx.projects.createProject({ name: 'Free shop', plan: 'free', accountId: alice.accountId })).project.id
  })
  after(async () => {
    await receiver.close()
    await t.stop()
  })

  const base = (projectId: string) => `/api/v1/projects/${projectId}/webhooks`
  const createWebhook = async (events?: string[]) => {
    const response = await alice.post(base(proId), { url: receiver.url, events })
    assert.equal(response.status, 201, JSON.stringify(response.body))
    return response.body as { id: string; url: string; secret: string; events: string[] }
  }

  describe('happy paths', () => {
    it('creates a webhook with its secret once, lists it without the secret, and deletes it', async () => {
      const created = await createWebhook(['payload.signed'])
      assert.match(created.secret, /^whsec_/)
      assert.deepEqual(created.events, ['payload.signed'])
      const list = await alice.get(base(proId))
      assert.equal(list.status, 200)
      const listed = list.body.webhooks.find((webhook: { id: string }) => webhook.id === created.id)
      assert.deepEqual(Object.keys(listed).sort(), ['createdAt', 'events', 'id', 'url'])

      const deleted = await alice.delete(`${base(proId)}/${created.id}`)
      assert.deepEqual([deleted.status, deleted.body], [200, { id: created.id, deleted: true }])
      const after = await alice.get(base(proId))
      assert.ok(!after.body.webhooks.some((webhook: { id: string }) => webhook.id === created.id))
    })

    it('sends a test event, lists it as delivered, and retries it', async () => {
      const { id } = await createWebhook()
      const test = await alice.post(`${base(proId)}/${id}/test`)
      assert.equal(test.status, 202)
      assert.equal(test.body.event, 'webhook.test')
      await dispatchAll(dispatcher)
      const deliveries = await alice.get(`${base(proId)}/${id}/deliveries?limit=5`)
      assert.equal(deliveries.status, 200)
      assert.deepEqual([deliveries.body.limit, deliveries.body.offset], [5, 0])
      assert.deepEqual(
        deliveries.body.deliveries.map((d: { id: string; state: string }) => [d.id, d.state]),
        [[test.body.id, 'succeeded']],
      )

      const retried = await alice.post(`${base(proId)}/${id}/deliveries/${test.body.id}/retry`)
      assert.deepEqual([retried.status, retried.body.id, retried.body.state], [202, test.body.id, 'pending'])
      const again = await alice.post(`${base(proId)}/${id}/deliveries/${test.body.id}/retry`)
      assert.equal(again.status, 409, 'a pending delivery is not retried twice')
      await dispatchAll(dispatcher)
      assert.equal(receiver.requests.filter((request) => request.headers['x-countersign-delivery'] === test.body.id).length, 2)
      await alice.delete(`${base(proId)}/${id}`)
    })

    it('enables a webhook its receiver disabled with 410 Gone, for the account that owns it only', async () => {
      const { id } = await createWebhook()
      receiver.respondWith(answer(410))
      await alice.post(`${base(proId)}/${id}/test`)
      await dispatchAll(dispatcher)
      receiver.respondWith(answer(204))
      const listed = async () => (await alice.get(base(proId))).body.webhooks.find((webhook: { id: string }) => webhook.id === id)
      assert.ok((await listed()).disabledAt)

      assert.equal((await bob.post(`${base(proId)}/${id}/enable`)).status, 404)
      assert.ok((await listed()).disabledAt, "another account's call changed nothing")
      const enabled = await alice.post(`${base(proId)}/${id}/enable`)
      assert.equal(enabled.status, 200)
      assert.equal(enabled.body.id, id)
      assert.equal(enabled.body.disabledAt, undefined)
      assert.equal((await listed()).disabledAt, undefined)
      await alice.delete(`${base(proId)}/${id}`)
    })

    it("lists a payload's deliveries with the webhook each went to", async () => {
      const { id } = await createWebhook(['payload.signed'])
      const payload = await t.service.ctx.payloads.create({ projectId: proId, plan: 'pro' }, { type: 'connect' })
      const untouched = await t.service.ctx.payloads.create({ projectId: proId, plan: 'pro' }, { type: 'connect' })
      await t.service.ctx.payloads.resolveSigned(payload.uuid, { ...SIGNED, publicKey: '02AB', signature: 'CD' })
      await dispatchAll(dispatcher)

      const response = await alice.get(`/api/v1/projects/${proId}/payloads/${payload.uuid}/deliveries`)
      assert.equal(response.status, 200)
      assert.equal(response.body.deliveries.length, 1)
      const [delivery] = response.body.deliveries
      assert.deepEqual(
        [delivery.webhookId, delivery.event, delivery.payloadUuid, delivery.state],
        [id, 'payload.signed', payload.uuid, 'succeeded'],
      )
      const none = await alice.get(`/api/v1/projects/${proId}/payloads/${untouched.uuid}/deliveries`)
      assert.deepEqual(none.body, { deliveries: [] })
    })
  })

  describe('errors', () => {
    it('answers 403 with the Pro message on a Free project', async () => {
      const payload = await t.service.ctx.payloads.create({ projectId: freeId, plan: 'free' }, { type: 'connect' })
      for (const response of [
        await alice.get(base(freeId)),
        await alice.post(base(freeId), { url: receiver.url }),
        await alice.get(`/api/v1/projects/${freeId}/payloads/${payload.uuid}/deliveries`),
      ]) {
        assert.deepEqual([response.status, response.body], [403, { error: 'Webhooks require the Pro plan' }])
      }
    })

    it('answers 401 without a session, even with an API key', async () => {
      const { apiKey } = await t.createProject('pro')
      const anonymous = dashboardClient(t, undefined)
      assert.equal((await anonymous.get(base(proId))).status, 401)
      assert.equal((await anonymous.get(base(proId), { headers: { authorization: `Bearer ${apiKey}` } })).status, 401)
    })

    it("answers 404 for another account's project, webhook or payload", async () => {
      const { id } = await createWebhook()
      const payload = await t.service.ctx.payloads.create({ projectId: proId, plan: 'pro' }, { type: 'connect' })
      assert.equal((await bob.get(base(proId))).status, 404)
      assert.equal((await bob.delete(`${base(proId)}/${id}`)).status, 404)
      assert.equal((await bob.post(`${base(proId)}/${id}/test`)).status, 404)
      assert.equal((await bob.get(`/api/v1/projects/${proId}/payloads/${payload.uuid}/deliveries`)).status, 404)
      const bobsPro = (await t.service.ctx.projects.createProject({ name: 'Bob', plan: 'pro', accountId: bob.accountId })).project.id
      assert.equal((await bob.delete(`${base(bobsPro)}/${id}`)).status, 404, "alice's webhook under bob's project")
      assert.equal((await bob.get(`/api/v1/projects/${bobsPro}/payloads/${payload.uuid}/deliveries`)).status, 404)
      await alice.delete(`${base(proId)}/${id}`)
    })

    it('answers 403 to a change without the service Origin', async () => {
      const { id } = await createWebhook()
      assert.equal((await alice.post(base(proId), { url: receiver.url }, { origin: null })).status, 403)
      assert.equal((await alice.delete(`${base(proId)}/${id}`, { origin: 'https://evil.example' })).status, 403)
      assert.equal((await alice.post(`${base(proId)}/${id}/test`, undefined, { origin: null })).status, 403)
      assert.equal((await alice.get(base(proId))).body.webhooks.filter((webhook: { id: string }) => webhook.id === id).length, 1)
      await alice.delete(`${base(proId)}/${id}`)
    })

    it('answers 422 to a bad body', async () => {
      const noUrl = await alice.post(base(proId), { events: ['payload.signed'] })
      assert.equal(noUrl.status, 422)
      const badEvent = await alice.post(base(proId), { url: receiver.url, events: ['payload.sent'] })
      assert.equal(badEvent.status, 422)
      assert.ok(badEvent.body.details.some((detail: { field: string }) => detail.field.startsWith('events')))
      const notAUrl = await alice.post(base(proId), { url: 'not a url' })
      assert.equal(notAUrl.status, 422)
    })
  })
})

describe('the dashboard shell', () => {
  let t: TestService
  before(async () => {
    t = await startTestService('sqlite')
  })
  after(() => t.stop())

  it('answers every dashboard path with the same data-free shell, under a strict policy', async () => {
    const pages = await Promise.all(
      ['/dashboard', '/dashboard/', '/dashboard/projects/proj_x/payloads/3f1c'].map((url) => t.inject({ method: 'GET', url })),
    )
    for (const page of pages) {
      assert.equal(page.statusCode, 200)
      assert.match(String(page.headers['content-type']), /^text\/html/)
      assert.match(String(page.headers['content-security-policy']), /default-src 'none'; script-src 'self'; style-src 'self'/)
      assert.equal(page.headers['x-frame-options'], 'DENY')
      assert.equal(page.body, pages[0]?.body)
    }
    const body = pages[0]?.body ?? ''
    assert.match(body, /<script type="module" src="\/assets\/dashboard.js"><\/script>/)
    assert.doesNotMatch(body, /<script>|<style|style=/, 'no inline script or style')
    const cached = await t.inject({ method: 'GET', url: '/dashboard', headers: { 'if-none-match': String(pages[0]?.headers.etag) } })
    assert.equal(cached.statusCode, 304)
  })
})
