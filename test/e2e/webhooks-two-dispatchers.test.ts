import assert from 'node:assert/strict'
import { it } from 'node:test'
import { loadConfig } from '../../src/config.js'
import { WebhookDispatcher } from '../../src/features/webhooks/dispatcher/webhook-dispatcher.js'
import { startService } from '../../src/main.js'
import { ManualClock } from '../../src/platform/clock.js'
import { createLogger } from '../../src/platform/logger.js'
import { createTestDatabase, forEachDatabase } from '../support/databases.js'
import { countByDeliveryId, startWebhookReceiver } from '../support/webhook-receiver.js'

const EVENTS = 400

forEachDatabase('two service instances dispatching from one database', (dialect) => {
  it('deliver each event exactly once between them, both taking a share', async () => {
    const database = await createTestDatabase(dialect)
    const receiver = await startWebhookReceiver()
    const config = loadConfig({
      PORT: '0',
      DATABASE_URL: database.url,
      PUBLIC_URL: 'http://countersign.test',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      LIMITS_PRO: '{"monthlyPayloads": 1000000}',
    })
    const clock = new ManualClock()
    const logger = createLogger('silent')
    const first = await startService(config, { listen: false, workers: false, clock, logger })
    const second = await startService(config, { listen: false, workers: false, clock, logger })
    try {
      const { project } = await first.ctx.projects.createProject({ name: 'Two instances', plan: 'pro' })
      const scope = { projectId: project.id, plan: 'pro' as const }
      const { webhook } = await first.ctx.webhooks.create(scope, { url: receiver.url })
      for (let i = 0; i < EVENTS; i++) {
        const instance = i % 2 === 0 ? first : second
        const payload = await instance.ctx.payloads.create(scope, { type: 'connect' })
        await instance.ctx.payloads.reject(payload.uuid, 'xaman')
      }

      // Small batches and many rounds, so that the two instances' claims overlap in time again and again.
      const sentBy = [0, 0]
      const dispatchers = [first, second].map(
        (instance, index) =>
          new WebhookDispatcher(instance.ctx, {
            maxHeldDeliveries: 8,
            onSendFinished: () => {
              sentBy[index]! += 1
            },
          }),
      )
      await Promise.all(
        dispatchers.map(async (dispatcher) => {
          for (;;) {
            const more = await dispatcher.dispatchDue()
            if (!more && receiver.requests.length >= EVENTS) break
            if (!more) await new Promise((resolve) => setImmediate(resolve))
          }
          await dispatcher.settled()
        }),
      )

      const counts = countByDeliveryId(receiver.requests)
      assert.equal(receiver.requests.length, EVENTS)
      assert.equal(counts.size, EVENTS)
      assert.deepEqual(new Set(counts.values()), new Set([1]), 'no delivery was sent twice')
      const rows = await first.ctx.storage.db
        .selectFrom('webhook_deliveries')
        .select(['state', 'attempts'])
        .where('webhook_id', '=', webhook.id)
        .execute()
      assert.equal(rows.length, EVENTS)
      assert.ok(rows.every((row) => row.state === 'succeeded' && row.attempts === 1))
      assert.ok(sentBy[0]! > 0 && sentBy[1]! > 0, `both instances sent deliveries (${sentBy.join(' and ')})`)
    } finally {
      await first.stop()
      await second.stop()
      await receiver.close()
      await database.drop()
    }
  })
})
