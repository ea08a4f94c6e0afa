import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type CommittedEvents, ServiceEvents, WORKER_WAKE_EVENTS, wakeOnEvents } from '../src/events.js'
import type { PayloadTransition } from '../src/features/payloads/transitions.js'
import { RETRY_DELAYS_MS } from '../src/features/webhooks/dispatcher/retry-schedule.js'
import { WebhookDispatcher } from '../src/features/webhooks/dispatcher/webhook-dispatcher.js'
import type { Tx } from '../src/platform/db/database.js'
import { forEachDatabase } from './support/databases.js'
import { startTestService, type TestService } from './support/service.js'
import { answer, startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js'
import { createPayload, deliveryRows, dispatchAll, registerWebhook, setAccountEmail } from './support/webhooks.js'

const transition = { payload: { uuid: 'u' }, event: 'payload.signed' } as unknown as PayloadTransition
const noTx = {} as Tx

describe('service events', () => {
  it('calls the listeners of an event in the order they were added, and no longer once removed', async () => {
    const events = new ServiceEvents()
    const calls: string[] = []
    events.onTransaction('payload.changed', async () => void calls.push('outbox'))
    const removeSecond = events.onTransaction('payload.changed', async () => void calls.push('second'))
    events.onCommit('payload.changed', () => void calls.push('committed'))
    await events.emitInTransaction(noTx, 'payload.changed', [transition])
    events.emitCommitted('payload.changed', transition)
    removeSecond()
    await events.emitInTransaction(noTx, 'payload.changed', [transition])
    assert.deepEqual(calls, ['outbox', 'second', 'committed', 'outbox'])
  })

  it('stops at a transaction listener that fails, and passes its error on (so the transaction rolls back)', async () => {
    const events = new ServiceEvents()
    const calls: string[] = []
    events.onTransaction('payload.changed', async () => {
      throw new Error('outbox write failed')
    })
    events.onTransaction('payload.changed', async () => void calls.push('after'))
    await assert.rejects(events.emitInTransaction(noTx, 'payload.changed', [transition]), /outbox write failed/)
    assert.deepEqual(calls, [])
  })

  it('wakes each worker on its own events only, until it stops listening', () => {
    const events = new ServiceEvents()
    const woken: string[] = []
    const stopDispatcher = wakeOnEvents(events, 'webhook-dispatcher', () => woken.push('dispatcher'))
    const stopMailer = wakeOnEvents(events, 'mailer', () => woken.push('mailer'))
    const failure = { deliveryId: 'dlv_1' } as CommittedEvents['delivery.failed']
    events.emitCommitted('payload.changed', transition)
    events.emitCommitted('delivery.queued')
    events.emitCommitted('delivery.failed', failure)
    const disabled = { webhookId: 'wh_1' } as CommittedEvents['webhook.disabled']
    events.emitCommitted('webhook.disabled', disabled)
    assert.deepEqual(woken, ['dispatcher', 'dispatcher', 'mailer', 'mailer'])
    stopDispatcher()
    stopMailer()
    events.emitCommitted('payload.changed', transition)
    events.emitCommitted('delivery.failed', failure)
    events.emitCommitted('webhook.disabled', disabled)
    assert.equal(woken.length, 4)
    assert.deepEqual(WORKER_WAKE_EVENTS, {
      'webhook-dispatcher': ['payload.changed', 'delivery.queued'],
      mailer: ['delivery.failed', 'webhook.disabled'],
    })
  })
})

forEachDatabase('the event flow: state change -> outbox -> dispatcher -> receiver -> alert mail', (dialect) => {
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

  it('tells committed listeners only what the database already holds', async () => {
    const { projectId, apiKey } = await t.createProject('pro', 'Event shop')
    await setAccountEmail(t, projectId, 'owner@events.test')
    const webhook = await registerWebhook(t, apiKey, receiver.url)
    receiver.respondWith(answer(500))
    const db = t.service.ctx.storage.db
    const seen: Promise<string>[] = []
    const removals = [
      t.service.ctx.events.onCommit('payload.changed', ({ payload }) => {
        seen.push(deliveryRows(t, webhook.id).then((rows) => `payload.changed ${payload.status}: ${rows.length} delivery`))
      }),
      t.service.ctx.events.onCommit('delivery.failed', ({ payloadUuid }) => {
        seen.push(
          db
            .selectFrom('emails')
            .select('kind')
            .where('project_id', '=', projectId)
            .execute()
            .then((rows) => `delivery.failed ${payloadUuid === uuid}: ${rows.map((row) => row.kind).join()}`),
        )
      }),
    ]
    const uuid = await createPayload(t, apiKey)
    try {
      await t.service.ctx.payloads.reject(uuid, 'xaman')
      const dispatcher = new WebhookDispatcher(t.service.ctx, { random: () => 0.5 })
      await dispatchAll(dispatcher)
      for (const delayMs of RETRY_DELAYS_MS) {
        t.clock.advance(delayMs)
        await dispatchAll(dispatcher)
      }
    } finally {
      for (const remove of removals) remove()
    }
    assert.equal(receiver.requests.length, RETRY_DELAYS_MS.length + 1)
    assert.deepEqual(await Promise.all(seen), ['payload.changed rejected: 1 delivery', 'delivery.failed true: webhook_failure'])
  })

  it('rolls a payload change back with its outbox rows when an outbox listener fails', async () => {
    const { apiKey } = await t.createProject('pro', 'Rollback shop')
    const webhook = await registerWebhook(t, apiKey, receiver.url)
    const uuid = await createPayload(t, apiKey)
    const committed: string[] = []
    const removals = [
      t.service.ctx.events.onTransaction('payload.changed', async () => {
        throw new Error('the outbox is unavailable')
      }),
      t.service.ctx.events.onCommit('payload.changed', ({ payload }) => void committed.push(payload.uuid)),
    ]
    try {
      await assert.rejects(t.service.ctx.payloads.reject(uuid, 'xaman'), /the outbox is unavailable/)
    } finally {
      for (const remove of removals) remove()
    }
    assert.deepEqual(committed, [])
    assert.deepEqual(await deliveryRows(t, webhook.id), [])
    const row = await t.service.ctx.storage.db.selectFrom('payloads').select('status').where('uuid', '=', uuid).executeTakeFirst()
    assert.equal(row?.status, 'pending')
  })
})
