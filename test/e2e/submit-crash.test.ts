// A process killed after the XRPL node took a signAndSubmit transaction, but before the payload moved to signed,
// loses no outcome: the service started in its place asks the node about the recorded submission, resolves the
// payload as signed once a validated ledger holds it (payload.signed, the follow), and the follower records and
// delivers the final outcome. A submission the ledger never took is released once it can no longer be applied: the
// user signs again.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { Wallet } from 'xrpl'
import { type Config, loadConfig } from '../../src/config.js'
import { FOLLOW_INTERVAL_MS } from '../../src/features/signing/transaction-follower.js'
import { WebhookDispatcher } from '../../src/features/webhooks/dispatcher/webhook-dispatcher.js'
import { startService } from '../../src/main.js'
import { ManualClock } from '../../src/platform/clock.js'
import { createLogger } from '../../src/platform/logger.js'
import { SETTLED_LEDGERS } from '../../src/platform/xrpl/xrpl-node.js'
import { createTestDatabase, forEachDatabase } from '../support/databases.js'
import { paymentTransaction } from '../support/fixtures.js'
import { type RippledDouble, startRippledDouble } from '../support/rippled-double.js'
import { signRequested, WALLET_FIELDS } from '../support/wallet-signing.js'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js'
import { dispatchAll } from '../support/webhooks.js'

const CHILD_SCRIPT = fileURLToPath(new URL('../support/follow-crash-child.ts', import.meta.url))
/** The submission claim's lease, and a margin: the service started in the dead one's place may take it over. */
const PAST_THE_LEASE_MS = 61_000

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (!(await check())) {
    if (performance.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`)
    await sleep(20)
  }
}

interface Crashed {
  config: Config
  uuid: string
  signed: ReturnType<typeof signRequested>
  signer: string
}

/**
 * Creates a signAndSubmit payload, then approves it in a child service whose node holds the submission's answer:
 * once the node has the blob (`tookIt` says whether it kept it), the child is killed before the answer arrives.
 */
async function crashWhileSubmitting(
  databaseUrl: string,
  rippled: RippledDouble,
  receiver: WebhookReceiver,
  tookIt: boolean,
): Promise<Crashed> {
  const env = {
    PORT: '0',
    DATABASE_URL: databaseUrl,
    PUBLIC_URL: 'http://countersign.test',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    XRPL_NODE_URL: rippled.url,
  }
  const config = loadConfig(env)
  const setup = await startService(config, { listen: false, workers: false, logger: createLogger('silent') })
  const { project } = await setup.ctx.projects.createProject({ name: 'Crash test', plan: 'pro' })
  const scope = { projectId: project.id, plan: 'pro' as const }
  await setup.ctx.webhooks.create(scope, { url: receiver.url, events: ['payload.signed', 'payload.finalized'] })
  const payload = await setup.ctx.payloads.create(scope, { type: 'signAndSubmit', transaction: paymentTransaction() })
  await setup.stop()
  const wallet = Wallet.generate()
  const signed = signRequested(wallet, paymentTransaction())

  rippled.hold('submit', true)
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
    await until(
      () => rippled.requests.some((request) => request.command === 'submit' && request.tx_blob === signed.tx_blob),
      `the submission (child wrote: ${output})`,
    )
    // The node applied it to its open ledger; its answer never reaches the child.
    if (tookIt) rippled.setTransaction(signed.hash, { validated: false, ledgerIndex: 0, transactionResult: 'tesSUCCESS' })
  } finally {
    child.kill('SIGKILL')
  }
  const [, signal] = await exited
  assert.equal(signal, 'SIGKILL')
  assert.equal(output.includes('200'), false, 'the child died before the answer')
  rippled.hold('submit', false)
  return { config, uuid: payload.uuid, signed, signer: wallet.classicAddress }
}

forEachDatabase('a submission survives a crash before the node answers', (dialect) => {
  it('the node took it: after a restart the payload is signed, and its outcome followed, recorded and delivered', async () => {
    const database = await createTestDatabase(dialect)
    const rippled = await startRippledDouble()
    const receiver = await startWebhookReceiver()
    try {
      const { config, uuid, signed, signer } = await crashWhileSubmitting(database.url, rippled, receiver, true)
      const clock = new ManualClock(Date.now() + PAST_THE_LEASE_MS)
      const restarted = await startService(config, { listen: false, workers: false, logger: createLogger('silent'), clock })
      try {
        const db = restarted.ctx.storage.db
        const atCrash = await db.selectFrom('payloads').selectAll().where('uuid', '=', uuid).executeTakeFirstOrThrow()
        assert.equal(atCrash.status, 'pending', 'the dead process never moved it')
        // The same blob sent again is refused by the ledger: it was applied already.
        rippled.setSubmitResult('tefPAST_SEQ')

        // In the node's open ledger only: the recovery waits for a validated ledger, holding the claim.
        const lookups = () => rippled.requests.filter((request) => request.command === 'tx' && request.transaction === signed.hash).length
        await restarted.ctx.signing.submissions.recoverLapsed()
        assert.equal(lookups(), 1)
        assert.equal(
          (await db.selectFrom('payloads').select('status').where('uuid', '=', uuid).executeTakeFirstOrThrow()).status,
          'pending',
        )
        assert.ok(await db.selectFrom('submission_claims').select('tx_hash').where('payload_uuid', '=', uuid).executeTakeFirst())
        rippled.setTransaction(signed.hash, {
          validated: true,
          ledgerIndex: 1004,
          transactionResult: 'tesSUCCESS',
          deliveredAmount: '1000000',
          closedAtMs: clock.now(),
        })
        clock.advance(FOLLOW_INTERVAL_MS)

        // Two instances recover at once: one takes the claim over, asks the node once and resolves the payload once.
        // Without Redis each instance's live stream hears its own changes: both listen, the resolving one tells.
        const other = await startService(config, { listen: false, workers: false, logger: createLogger('silent'), clock })
        const streamed: string[] = []
        const listen = (view: { status: string } | null) => {
          if (view) streamed.push(view.status)
        }
        const unsubscribe = [restarted.ctx.liveEvents.subscribe(uuid, listen), other.ctx.liveEvents.subscribe(uuid, listen)]
        try {
          await Promise.all([restarted.ctx.signing.submissions.recoverLapsed(), other.ctx.signing.submissions.recoverLapsed()])
          await until(() => streamed.includes('signed'), 'the live stream hears of the move to signed')
        } finally {
          for (const stop of unsubscribe) stop()
          await other.stop()
        }
        assert.deepEqual(streamed, ['signed'])
        assert.equal(lookups(), 2)
        const recovered = await db.selectFrom('payloads').selectAll().where('uuid', '=', uuid).executeTakeFirstOrThrow()
        assert.equal(recovered.status, 'signed')
        assert.equal(recovered.tx_hash, signed.hash)
        assert.equal(recovered.tx_blob, signed.tx_blob)
        assert.equal(recovered.wallet_adapter, 'gemwallet')
        assert.equal(recovered.signer_address, signer)
        assert.equal(recovered.submit_engine_result, null, 'the submission’s answer never arrived')
        const proof = await db.selectFrom('payload_proofs').selectAll().where('payload_uuid', '=', uuid).executeTakeFirst()
        assert.ok(proof, 'the proof is recorded, as the normal path records it')
        assert.equal(await db.selectFrom('submission_claims').selectAll().where('payload_uuid', '=', uuid).executeTakeFirst(), undefined)
        const follow = await db.selectFrom('transaction_follows').selectAll().where('id', '=', uuid).executeTakeFirstOrThrow()
        assert.equal(follow.tx_hash, signed.hash)
        assert.equal(follow.last_ledger_sequence, WALLET_FIELDS.LastLedgerSequence)

        // The follow records the validated ledger's outcome.
        clock.advance(FOLLOW_INTERVAL_MS)
        await restarted.ctx.follower.followDue()
        await dispatchAll(new WebhookDispatcher(restarted.ctx, { random: () => 0.5 }))

        const after = await db.selectFrom('payloads').selectAll().where('uuid', '=', uuid).executeTakeFirstOrThrow()
        assert.equal(after.outcome, 'succeeded')
        assert.equal(after.validated_result, 'tesSUCCESS')
        assert.equal(after.validated_ledger_index, 1004)
        const delivered = receiver.requests.map((request) => JSON.parse(request.rawBody.toString()))
        assert.deepEqual(delivered.map((body) => body.event).sort(), ['payload.finalized', 'payload.signed'])
        const signedEvent = delivered.find((body) => body.event === 'payload.signed')
        const finalized = delivered.find((body) => body.event === 'payload.finalized')
        assert.equal(signedEvent.payload.txHash, signed.hash)
        assert.equal(finalized.payload.submission.outcome, 'succeeded')
        assert.equal(finalized.payload.submission.deliveredAmount, '1000000')
      } finally {
        await restarted.stop()
      }
    } finally {
      await receiver.close()
      await rippled.close()
      await database.drop()
    }
  })

  it('the node never took it: released once the ledger passes LastLedgerSequence, and the user signs again', async () => {
    const database = await createTestDatabase(dialect)
    const rippled = await startRippledDouble()
    const receiver = await startWebhookReceiver()
    try {
      const { config, uuid, signed } = await crashWhileSubmitting(database.url, rippled, receiver, false)

      const clock = new ManualClock(Date.now() + PAST_THE_LEASE_MS)
      const restarted = await startService(config, { listen: false, workers: false, logger: createLogger('silent'), clock })
      const approve = (signedTransaction: string) =>
        restarted.app.inject({
          method: 'POST',
          url: `/api/v1/sign/${uuid}/approve`,
          payload: { walletAdapter: 'gemwallet', signedTransaction },
        })
      try {
        const db = restarted.ctx.storage.db
        const status = async () =>
          (await db.selectFrom('payloads').select('status').where('uuid', '=', uuid).executeTakeFirstOrThrow()).status
        const resigned = signRequested(Wallet.generate(), paymentTransaction(), { Sequence: 8 })

        // The ledger may still apply it (validated ledger 1000, LastLedgerSequence 1020): it stays claimed, and a
        // different signature waits rather than risk a second transaction.
        await restarted.ctx.signing.submissions.recoverLapsed()
        assert.equal(await status(), 'pending')
        assert.equal((await approve(resigned.tx_blob)).statusCode, 409)
        assert.equal(rippled.submitted.includes(resigned.tx_blob), false)

        rippled.setValidatedLedgerIndex(WALLET_FIELDS.LastLedgerSequence + SETTLED_LEDGERS)
        clock.advance(2_000)
        await restarted.ctx.signing.submissions.recoverLapsed()
        assert.equal(await status(), 'pending')
        assert.equal(await db.selectFrom('submission_claims').selectAll().where('payload_uuid', '=', uuid).executeTakeFirst(), undefined)

        const response = await approve(resigned.tx_blob)
        assert.equal(response.statusCode, 200, response.body)
        assert.equal(response.json().txHash, resigned.hash)
        assert.equal(await status(), 'signed')
        assert.notEqual(resigned.hash, signed.hash)
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
