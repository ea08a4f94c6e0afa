// An overloaded dispatcher against its lease: claims that wait past it, results that come back after it, and records
// that fail for a while. Another instance's dispatcher may take over a lapsed claim, so what the first one does late
// must neither reach the receiver a second time nor overwrite the new owner's record.
import assert from 'node:assert/strict'
import type { ServerResponse } from 'node:http'
import { after, afterEach, before, it } from 'node:test'
import { type KyselyPlugin, type PluginTransformQueryArgs, type PluginTransformResultArgs, type RootOperationNode, TableNode } from 'kysely'
import { WebhookDispatcher } from '../../../../src/features/webhooks/dispatcher/webhook-dispatcher.js'
import { forEachDatabase } from '../../../support/databases.js'
import { createPayload } from '../../../support/payloads.js'
import { startTestService, type TestService } from '../../../support/service.js'
import { answer, countByDeliveryId, startWebhookReceiver, type WebhookReceiver } from '../../../support/webhook-receiver.js'
import { deliveryRows, dispatchAll, registerWebhook } from '../../../support/webhooks.js'

/** The lease of a claim with the default 10-second timeout (delivery-lease.ts). */
const LEASE_MS = 60_000

/** Fails the next `count` statements that `matches` picks before they reach the database, as a pool with no connection free does. */
class FailingStatements implements KyselyPlugin {
  private failuresLeft = 0

  constructor(private readonly matches: (node: RootOperationNode) => boolean) {}

  failNext(count: number): void {
    this.failuresLeft = count
  }

  transformQuery({ node }: PluginTransformQueryArgs) {
    if (this.failuresLeft > 0 && this.matches(node)) {
      this.failuresLeft -= 1
      throw new Error('timeout exceeded when trying to connect')
    }
    return node
  }

  async transformResult({ result }: PluginTransformResultArgs) {
    return result
  }
}

const isUpdate = (node: RootOperationNode) => node.kind === 'UpdateQueryNode'
/** A read from the webhooks table (a claim's own subquery reads webhook_deliveries). */
const readsWebhooks = (node: RootOperationNode) =>
  node.kind === 'SelectQueryNode' &&
  (node.from?.froms ?? []).some((from) => TableNode.is(from) && from.table.identifier.name === 'webhooks')

forEachDatabase('webhook dispatcher: an overloaded instance and its lease', (dialect) => {
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
  afterEach(async () => {
    receiver.requests.length = 0
    receiver.respondWith(answer(204))
    await t.service.ctx.storage.db
      .updateTable('webhook_deliveries')
      .set({ state: 'cancelled' })
      .where('state', 'in', ['pending', 'sending'])
      .execute()
  })

  async function webhookWithRejectedPayloads(count: number) {
    const { apiKey } = await t.createProject('pro', 'Acme shop')
    const webhook = await registerWebhook(t, apiKey, receiver.url)
    for (let i = 0; i < count; i++) await t.service.ctx.payloads.reject(await createPayload(t, apiKey), 'xaman')
    return webhook
  }

  /** The receiver keeps the first `count` requests unanswered (answered later by the test), and answers the rest 204. */
  function holdFirstRequests(count: number): ServerResponse[] {
    const held: ServerResponse[] = []
    receiver.respondWith((_request, res) => {
      if (held.length < count) held.push(res)
      else res.writeHead(204).end()
    })
    return held
  }

  const dispatcher = (options: ConstructorParameters<typeof WebhookDispatcher>[1] = {}) =>
    new WebhookDispatcher(t.service.ctx, { random: () => 0.5, ...options })

  const deliveryIdOf = (index: number) => String(receiver.requests[index]?.headers['x-countersign-delivery'])

  it('sends none of the deliveries that waited in it past their lease; the dispatcher that took them over sends each once', async () => {
    const webhook = await webhookWithRejectedPayloads(3)
    const held = holdFirstRequests(1)
    // One sending slot for the webhook: the first delivery goes to a receiver that is slow to answer, and the other two
    // wait in the process for the slot.
    const overloaded = dispatcher({ maxConcurrentSendsPerWebhook: 1 })
    await overloaded.dispatchDue()
    await receiver.waitFor(1)
    const sentBeforeTheLeaseRanOut = deliveryIdOf(0)

    // The process falls a whole lease behind; another instance's dispatcher finds the claims lapsed and takes them over.
    t.clock.advance(LEASE_MS)
    await dispatchAll(dispatcher())
    assert.equal(receiver.requests.length, 4)
    assert.equal(new Set([1, 2, 3].map(deliveryIdOf)).size, 3, 'the taker sent each delivery once')

    // The slow receiver answers at last, with an error: the overloaded dispatcher's slot is free for the two that waited.
    held[0]?.writeHead(503).end()
    await overloaded.settled()

    assert.equal(receiver.requests.length, 4, 'the overloaded dispatcher sent none of the claims it had lost')
    for (const [id, count] of countByDeliveryId(receiver.requests)) {
      // The send under way when the clock jumped a lease is the one repeat a stalled process can cause: receivers
      // deduplicate on the delivery id (docs/webhooks.md); its late failure is not recorded.
      assert.equal(count, id === sentBeforeTheLeaseRanOut ? 2 : 1, `delivery ${id}`)
    }
    const rows = await deliveryRows(t, webhook.id)
    assert.deepEqual(
      rows.map((row) => [row.state, row.attempts, row.last_status_code]),
      rows.map(() => ['succeeded', 1, 204]),
    )
  })

  it('starts no send on a claim about to lapse, and hands it back so that the next claim sends it at once', async () => {
    const webhook = await webhookWithRejectedPayloads(3)
    const held = holdFirstRequests(1)
    const sent: number[] = []
    const overloaded = dispatcher({ maxConcurrentSendsPerWebhook: 1, onSendFinished: () => sent.push(1) })
    await overloaded.dispatchDue()
    await receiver.waitFor(1)

    // 15 seconds of the lease are left when the slot frees: less than a send may take and the margin after it.
    t.clock.advance(LEASE_MS - 15_000)
    held[0]?.writeHead(204).end()
    await overloaded.settled()
    assert.equal(sent.length, 1, 'the two claims left waiting were not sent')
    assert.equal(receiver.requests.length, 1)

    // Handed back, they are due at once: no one waits for the lease to run out.
    await dispatchAll(dispatcher())
    assert.equal(receiver.requests.length, 3)
    assert.deepEqual(new Set(countByDeliveryId(receiver.requests).values()), new Set([1]), 'each delivery received once')
    const rows = await deliveryRows(t, webhook.id)
    assert.deepEqual(
      rows.map((row) => [row.state, row.attempts]),
      rows.map(() => ['succeeded', 1]),
    )
  })

  it('claims for one webhook no more than its sending slots can start well within the lease', async () => {
    const webhook = await webhookWithRejectedPayloads(10)
    const held = holdFirstRequests(1)
    const slow = dispatcher({ maxConcurrentSendsPerWebhook: 1 })
    await slow.dispatchDue()
    await receiver.waitFor(1)
    // Three for the one slot (delivery-lease.ts): one sending, two waiting; a second claim finds no room for the webhook.
    await slow.dispatchDue()
    const states = (await deliveryRows(t, webhook.id)).map((row) => row.state)
    assert.equal(states.filter((state) => state === 'sending').length, 3)
    assert.equal(states.filter((state) => state === 'pending').length, 7)
    held[0]?.writeHead(204).end()
    await slow.stop()
  })

  for (const lateStatus of [200, 500]) {
    it(`records nothing from a lapsed claim's late ${lateStatus} over the attempt of the dispatcher that took it over`, async () => {
      const webhook = await webhookWithRejectedPayloads(1)
      const held = holdFirstRequests(2)
      const overloaded = dispatcher()
      await overloaded.dispatchDue()
      await receiver.waitFor(1)

      t.clock.advance(LEASE_MS)
      const taker = dispatcher()
      await taker.dispatchDue()
      await receiver.waitFor(2)
      assert.equal(deliveryIdOf(1), deliveryIdOf(0))

      // The first send's answer comes back while the taker's send of the same delivery is under way.
      held[0]?.writeHead(lateStatus).end()
      await overloaded.settled()
      held[1]?.writeHead(201).end()
      await taker.settled()

      const [row] = await deliveryRows(t, webhook.id)
      assert.deepEqual([row?.state, row?.attempts, row?.last_status_code, row?.last_error], ['succeeded', 1, 201, null])
    })
  }

  it('hands a claim back at once when the lookup of its webhooks fails, instead of holding it for the lease', async () => {
    await webhookWithRejectedPayloads(2)
    const failing = new FailingStatements(readsWebhooks)
    const { storage } = t.service.ctx
    const pressed = new WebhookDispatcher(
      { ...t.service.ctx, storage: { ...storage, db: storage.db.withPlugin(failing) } },
      { random: () => 0.5 },
    )
    // The claim (an UPDATE) goes through; the read of its webhooks after it fails, as under load.
    failing.failNext(1)
    await assert.rejects(pressed.dispatchDue(), /timeout exceeded/)
    await pressed.settled()
    assert.equal(receiver.requests.length, 0)

    // Due again now, not in a minute: the next claim, here or on another instance, sends them.
    await dispatchAll(dispatcher())
    assert.equal(receiver.requests.length, 2)
  })

  it('records a success again when its record fails for a while, so that no one sends the delivery a second time', async () => {
    const webhook = await webhookWithRejectedPayloads(1)
    const failing = new FailingStatements(isUpdate)
    const { storage } = t.service.ctx
    const pressed = new WebhookDispatcher(
      { ...t.service.ctx, storage: { ...storage, db: storage.db.withPlugin(failing) } },
      { random: () => 0.5 },
    )
    await pressed.dispatchDue()
    // The delivery is on its way; the next two writes fail, as under load when no database connection comes free.
    failing.failNext(2)
    await pressed.settled()
    assert.equal(receiver.requests.length, 1)
    const [row] = await deliveryRows(t, webhook.id)
    assert.deepEqual([row?.state, row?.attempts, row?.last_status_code], ['succeeded', 1, 204])

    // Had the success been lost, the delivery would be taken over and sent again once the lease ran out.
    t.clock.advance(LEASE_MS)
    await dispatchAll(dispatcher())
    assert.equal(receiver.requests.length, 1)
  })

  it('records a failed attempt again when its record fails for a while, so that its retry keeps to the schedule', async () => {
    const webhook = await webhookWithRejectedPayloads(1)
    receiver.respondWith(answer(500))
    const failing = new FailingStatements(isUpdate)
    const { storage } = t.service.ctx
    const pressed = new WebhookDispatcher(
      { ...t.service.ctx, storage: { ...storage, db: storage.db.withPlugin(failing) } },
      { random: () => 0.5 },
    )
    await pressed.dispatchDue()
    failing.failNext(1)
    await pressed.settled()
    const [row] = await deliveryRows(t, webhook.id)
    assert.deepEqual([row?.state, row?.attempts, row?.last_status_code, row?.next_attempt_at], ['pending', 1, 500, t.clock.now() + 10_000])
  })
})
