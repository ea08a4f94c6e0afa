// A process killed between the submission of a signAndSubmit transaction and its validation loses no outcome: the
// service started in its place takes the follow over, records the outcome and delivers payload.finalized.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { Wallet } from 'xrpl'
import { loadConfig } from '../../src/config.js'
import { FOLLOW_LEASE_MS } from '../../src/features/signing/transaction-follower.js'
import { WebhookDispatcher } from '../../src/features/webhooks/dispatcher/webhook-dispatcher.js'
import { startService } from '../../src/main.js'
import { ManualClock } from '../../src/platform/clock.js'
import { createLogger } from '../../src/platform/logger.js'
import { createTestDatabase, forEachDatabase } from '../support/databases.js'
import { paymentTransaction } from '../support/fixtures.js'
import { startRippledDouble } from '../support/rippled-double.js'
import { signRequested } from '../support/wallet-signing.js'
import { startWebhookReceiver } from '../support/webhook-receiver.js'
import { dispatchAll } from '../support/webhooks.js'

const CHILD_SCRIPT = fileURLToPath(new URL('../support/follow-crash-child.ts', import.meta.url))
/** The follow's lease, and a margin: the service started in the dead one's place may take its follow over. */
const PAST_THE_LEASE_MS = FOLLOW_LEASE_MS + 1_000

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (!(await check())) {
    if (performance.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`)
    await sleep(20)
  }
}

forEachDatabase('the follow of a submitted transaction survives a crash', (dialect) => {
  it('killed while it waits for the ledger, the outcome is recorded and delivered after a restart', async () => {
    const database = await createTestDatabase(dialect)
    const rippled = await startRippledDouble()
    const receiver = await startWebhookReceiver()
    const env = {
      PORT: '0',
      DATABASE_URL: database.url,
      PUBLIC_URL: 'http://countersign.test',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      XRPL_NODE_URL: rippled.url,
    }
    const config = loadConfig(env)
    const logger = createLogger('silent')
    try {
      const setup = await startService(config, { listen: false, workers: false, logger })
      const { project } = await setup.ctx.projects.createProject({ name: 'Crash test', plan: 'pro' })
      const scope = { projectId: project.id, plan: 'pro' as const }
      await setup.ctx.webhooks.create(scope, { url: receiver.url, events: ['payload.finalized'] })
      const payload = await setup.ctx.payloads.create(scope, { type: 'signAndSubmit', transaction: paymentTransaction() })
      await setup.stop()
      const signed = signRequested(Wallet.generate(), paymentTransaction())

      // The node answers the submission, but not the follower's lookups: the kill finds the follow leased, mid-look.
      rippled.hold('tx', true)
      const child = spawn(process.execPath, ['--import', 'tsx/esm', CHILD_SCRIPT], {
        env: { ...process.env, ...env, PAYLOAD_UUID: payload.uuid, SIGNED_BLOB: signed.tx_blob },
        stdio: ['pipe', 'pipe', 'pipe'],
      })
      let output = ''
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString()
      })
      child.stderr.on('data', (chunk: Buffer) => {
        output += chunk.toString()
      })
      const exited = once(child, 'exit')
      try {
        await until(() => output.includes('200'), `the approval (child wrote: ${output})`)
        await until(() => rippled.requests.some((request) => request.command === 'tx' && request.transaction === signed.hash), 'a look')
      } finally {
        child.kill('SIGKILL')
      }
      const [, signal] = await exited
      assert.equal(signal, 'SIGKILL')
      assert.ok(rippled.submitted.includes(signed.tx_blob))

      // Validated while no instance was running.
      rippled.hold('tx', false)
      rippled.setTransaction(signed.hash, {
        validated: true,
        ledgerIndex: 1004,
        transactionResult: 'tesSUCCESS',
        deliveredAmount: '1000000',
      })

      const clock = new ManualClock(Date.now() + PAST_THE_LEASE_MS)
      const restarted = await startService(config, { listen: false, workers: false, logger, clock })
      try {
        const db = restarted.ctx.storage.db
        const atCrash = await db.selectFrom('transaction_follows').selectAll().where('id', '=', payload.uuid).executeTakeFirstOrThrow()
        assert.equal(atCrash.state, 'sending', 'the dead process held the follow')
        const before = await db.selectFrom('payloads').selectAll().where('uuid', '=', payload.uuid).executeTakeFirstOrThrow()
        assert.equal(before.status, 'signed')
        assert.equal(before.outcome, null)

        await restarted.ctx.follower.followDue()
        await dispatchAll(new WebhookDispatcher(restarted.ctx, { random: () => 0.5 }))

        const after = await db.selectFrom('payloads').selectAll().where('uuid', '=', payload.uuid).executeTakeFirstOrThrow()
        assert.equal(after.outcome, 'succeeded')
        assert.equal(after.validated_result, 'tesSUCCESS')
        assert.equal(after.validated_ledger_index, 1004)
        const delivered = receiver.requests.map((request) => JSON.parse(request.rawBody.toString()))
        assert.equal(delivered.length, 1)
        assert.equal(delivered[0].event, 'payload.finalized')
        assert.equal(delivered[0].payload.submission.outcome, 'succeeded')
        assert.equal(delivered[0].payload.submission.deliveredAmount, '1000000')
      } finally {
        await restarted.stop()
      }
    } finally {
      await receiver.close()
      await rippled.close()
      await database.drop()
    }
  })
})
