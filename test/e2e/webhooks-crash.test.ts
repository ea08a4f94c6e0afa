import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { loadConfig } from '../../src/config.js'
import { WebhookDispatcher } from '../../src/features/webhooks/dispatcher/webhook-dispatcher.js'
import { startService } from '../../src/main.js'
import { ManualClock } from '../../src/platform/clock.js'
import { createLogger } from '../../src/platform/logger.js'
import { createTestDatabase, forEachDatabase } from '../support/databases.js'
import { answer, countByDeliveryId, hasValidSignature, startWebhookReceiver } from '../support/webhook-receiver.js'
import { dispatchAll } from '../support/webhooks.js'

const CHILD_SCRIPT = fileURLToPath(new URL('../support/webhook-crash-child.ts', import.meta.url))
/** The dispatcher's lease, and a margin: a restarted service may take over every claim the dead process held. */
const PAST_EVERY_LEASE_MS = 61_000
const ANSWERED_BEFORE_CRASH = 60

forEachDatabase('webhook deliveries survive a crash', (dialect) => {
  it('delivers every event committed before SIGKILL after a restart, and repeats only the attempts cut short', async () => {
    const database = await createTestDatabase(dialect)
    // The first 60 deliveries are answered; later ones are held open, so that however fast the child delivers,
    // the kill finds deliveries in flight and waiting.
    let requestsSoFar = 0
    const receiver = await startWebhookReceiver((request, res) => {
      if (++requestsSoFar <= ANSWERED_BEFORE_CRASH) answer(204)(request, res)
    })
    const env = {
      PORT: '0',
      DATABASE_URL: database.url,
      PUBLIC_URL: 'http://countersign.test',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      LIMITS_PRO: '{"requestsPerMinute": 1000000, "monthlyPayloads": 1000000}',
    }
    const config = loadConfig(env)
    const logger = createLogger('silent')
    try {
      const setup = await startService(config, { listen: false, workers: false, logger })
      const { project } = await setup.ctx.projects.createProject({ name: 'Crash test', plan: 'pro' })
      const { webhook, secret } = await setup.ctx.webhooks.create({ projectId: project.id, plan: 'pro' }, { url: receiver.url })
      await setup.stop()

      const child = spawn(process.execPath, ['--import', 'tsx/esm', CHILD_SCRIPT], {
        env: { ...process.env, ...env, PROJECT_ID: project.id },
        stdio: ['pipe', 'ignore', 'pipe'],
      })
      let childErrors = ''
      child.stderr.on('data', (chunk: Buffer) => {
        childErrors += chunk.toString()
      })
      const exited = once(child, 'exit')
      try {
        await receiver.waitFor(ANSWERED_BEFORE_CRASH + 1, 60_000)
      } catch (error) {
        child.kill('SIGKILL')
        throw new Error(`${(error as Error).message}; the child wrote: ${childErrors}`)
      }
      child.kill('SIGKILL')
      const [, signal] = await exited
      assert.equal(signal, 'SIGKILL')

      const clock = new ManualClock(Date.now() + PAST_EVERY_LEASE_MS)
      const restarted = await startService(config, { listen: false, workers: false, logger, clock })
      try {
        const db = restarted.ctx.storage.db
        const resolved = await db
          .selectFrom('payloads')
          .select('uuid')
          .where('project_id', '=', project.id)
          .where('status', '!=', 'pending')
          .execute()
        const atCrash = await db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhook.id).execute()
        assert.ok(resolved.length > ANSWERED_BEFORE_CRASH)
        assert.deepEqual(
          atCrash.map((row) => row.payload_uuid).sort(),
          resolved.map((row) => row.uuid).sort(),
          'every committed state change has exactly one delivery: written in its transaction',
        )
        const cutShort = new Set(atCrash.filter((row) => row.state === 'sending').map((row) => row.id))
        const doneBeforeCrash = new Set(atCrash.filter((row) => row.state === 'succeeded').map((row) => row.id))
        assert.ok(
          atCrash.some((row) => row.state !== 'succeeded'),
          'the crash came mid-stream, with deliveries still to make',
        )

        receiver.respondWith(answer(204))
        await dispatchAll(new WebhookDispatcher(restarted.ctx))

        const after = await db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhook.id).execute()
        assert.deepEqual(
          new Set(after.map((row) => row.state)),
          new Set(['succeeded']),
          JSON.stringify(after.filter((r) => r.state !== 'succeeded').slice(0, 3)),
        )
        const received = countByDeliveryId(receiver.requests)
        assert.deepEqual(new Set(received.keys()), new Set(after.map((row) => row.id)), 'every delivery arrived, and nothing else')
        for (const [id, count] of received) {
          if (doneBeforeCrash.has(id)) assert.equal(count, 1, `${id} had succeeded before the crash and was not sent again`)
          else if (cutShort.has(id)) assert.ok(count <= 2, `${id} was in flight at the crash: sent at most once more`)
          else assert.equal(count, 1, `${id} was waiting at the crash and was sent once`)
        }
        for (const request of receiver.requests) {
          assert.ok(
            hasValidSignature(request.rawBody, request.headers['x-service-signature'], secret),
            `${request.headers['x-countersign-delivery']} is signed`,
          )
        }
      } finally {
        await restarted.stop()
      }
    } finally {
      await receiver.close()
      await database.drop()
    }
  })
})
