// The final outcome of a signAndSubmit transaction, learned in the background from the validated ledger: recorded on the
// payload, sent once as payload.finalized to the webhooks that ask for it and to the app's live stream, one follower
// per transaction across instances.
import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, it } from 'node:test'
import { Wallet } from 'xrpl'
import { FOLLOW_INTERVAL_MS, FOLLOW_WITHOUT_LAST_LEDGER_MS } from '../../../src/features/signing/transaction-follower.js'
import { WebhookDispatcher } from '../../../src/features/webhooks/dispatcher/webhook-dispatcher.js'
import { type RunningService, startService } from '../../../src/main.js'
import { createLogger } from '../../../src/platform/logger.js'
import { forEachDatabase } from '../../support/databases.js'
import { paymentTransaction } from '../../support/fixtures.js'
import { createPayload, readPayload } from '../../support/payloads.js'
import { type RippledDouble, startRippledDouble } from '../../support/rippled-double.js'
import { startTestService, type TestService } from '../../support/service.js'
import { openSse } from '../../support/sse.js'
import { signRequested } from '../../support/wallet-signing.js'
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js'
import { dispatchAll, registerWebhook } from '../../support/webhooks.js'

forEachDatabase('the final outcome of a submitted transaction', (dialect) => {
  let t: TestService
  let rippled: RippledDouble
  let receiver: WebhookReceiver
  let dispatcher: WebhookDispatcher
  let apiKey: string

  before(async () => {
    rippled = await startRippledDouble()
    receiver = await startWebhookReceiver()
    t = await startTestService(dialect, { env: { XRPL_NODE_URL: rippled.url }, listen: true })
    dispatcher = new WebhookDispatcher(t.service.ctx, { random: () => 0.5 })
    ;({ apiKey } = await t.createProject('pro'))
  })
  after(async () => {
    await t.stop()
    await receiver.close()
    await rippled.close()
  })
  beforeEach(async () => {
    await rippled.start()
    rippled.setValidatedLedgerIndex(1000)
    receiver.requests.length = 0
  })

  /** A signAndSubmit payload approved and submitted; returns its uuid and the transaction's hash. */
  const submitted = async (extra: Record<string, unknown> = {}) => {
    const uuid = await createPayload(t, apiKey, { type: 'signAndSubmit', transaction: paymentTransaction() })
    const signed = signRequested(Wallet.generate(), paymentTransaction(), extra)
    const response = await t.inject({
      method: 'POST',
      url: `/api/v1/sign/${uuid}/approve`,
      payload: { walletAdapter: 'gemwallet', signedTransaction: signed.tx_blob },
    })
    assert.equal(response.statusCode, 200, response.body)
    return { uuid, hash: signed.hash }
  }
  const follow = () => t.service.ctx.follower.followDue()
  const bodiesOf = (event: string) =>
    receiver.requests.map((request) => JSON.parse(request.rawBody.toString())).filter((body: { event: string }) => body.event === event)

  it('sends payload.finalized once, with the submission, to the webhooks that list it, and only to them', async () => {
    const listing = await registerWebhook(t, apiKey, `${receiver.url}/finalized`, ['payload.signed', 'payload.finalized'])
    const defaults = await registerWebhook(t, apiKey, `${receiver.url}/default`)
    assert.deepEqual(defaults.events, ['payload.signed', 'payload.rejected', 'payload.expired'], 'finalized is asked for by name')
    const { uuid, hash } = await submitted()
    await follow()
    await dispatchAll(dispatcher)
    assert.deepEqual(bodiesOf('payload.finalized'), [], 'nothing final yet')

    rippled.setTransaction(hash, {
      validated: true,
      ledgerIndex: 1003,
      transactionResult: 'tesSUCCESS',
      deliveredAmount: { currency: 'USD', issuer: 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe', value: '9.5' },
    })
    t.clock.advance(FOLLOW_INTERVAL_MS)
    await follow()
    t.clock.advance(FOLLOW_INTERVAL_MS)
    await follow()
    await dispatchAll(dispatcher)

    const finalized = receiver.requests.filter((request) => JSON.parse(request.rawBody.toString()).event === 'payload.finalized')
    assert.equal(finalized.length, 1)
    assert.equal(finalized[0]?.path, new URL(`${receiver.url}/finalized`).pathname)
    const body = JSON.parse(finalized[0]?.rawBody.toString() ?? '{}')
    assert.equal(body.payload.uuid, uuid)
    assert.equal(body.payload.status, 'signed')
    assert.deepEqual(body.payload.submission, {
      engineResult: 'tesSUCCESS',
      validatedResult: 'tesSUCCESS',
      ledgerIndex: 1003,
      outcome: 'succeeded',
      deliveredAmount: { currency: 'USD', issuer: 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe', value: '9.5' },
    })
    const signedEvents = receiver.requests.filter((request) => JSON.parse(request.rawBody.toString()).event === 'payload.signed')
    assert.deepEqual(signedEvents.map((request) => request.path.split('/').pop()).sort(), ['default', 'finalized'])
    assert.equal(
      JSON.parse(signedEvents[0]?.rawBody.toString() ?? '{}').payload.submission,
      undefined,
      'payload.signed keeps the shape of interface.md §6',
    )
    assert.ok(listing.id)
  })

  it("keeps the app's live stream open after signed, sends the outcome, then ends it", async () => {
    const uuid = await createPayload(t, apiKey, { type: 'signAndSubmit', transaction: paymentTransaction() })
    const stream = await openSse(`${t.url}/api/v1/payloads/${uuid}/events?api_key=${apiKey}`)
    try {
      assert.equal(((await stream.nextData()) as { status: string }).status, 'pending')
      const signed = signRequested(Wallet.generate(), paymentTransaction())
      const approval = await t.inject({
        method: 'POST',
        url: `/api/v1/sign/${uuid}/approve`,
        payload: { walletAdapter: 'gemwallet', signedTransaction: signed.tx_blob },
      })
      assert.equal(approval.statusCode, 200)
      const afterSigning = (await stream.nextData()) as { status: string; submission: { outcome: string | null } }
      assert.equal(afterSigning.status, 'signed')
      assert.equal(afterSigning.submission.outcome, null)
      rippled.setTransaction(signed.hash, { validated: true, ledgerIndex: 1004, transactionResult: 'tecUNFUNDED_PAYMENT' })
      await follow()
      const final = (await stream.nextData()) as { submission: { outcome: string; validatedResult: string } }
      assert.equal(final.submission.outcome, 'failed')
      assert.equal(final.submission.validatedResult, 'tecUNFUNDED_PAYMENT')
      assert.deepEqual(await stream.next(), { kind: 'end' })
    } finally {
      stream.close()
    }
  })

  it('rides out a node outage: the follow waits and the outcome is recorded once the node answers', async () => {
    const { uuid, hash } = await submitted()
    await rippled.stop()
    await follow()
    assert.equal((await readPayload(t, apiKey, uuid)).submission.outcome, null)
    await rippled.start()
    rippled.setValidatedLedgerIndex(1030)
    t.clock.advance(10_000)
    await follow()
    const view = await readPayload(t, apiKey, uuid)
    assert.equal(view.submission.outcome, 'dropped', `${hash} missed its LastLedgerSequence while the node was away`)
  })

  it('follows a transaction without LastLedgerSequence for a bounded time, then gives up without an outcome', async () => {
    const { uuid } = await submitted({ LastLedgerSequence: undefined })
    rippled.setValidatedLedgerIndex(50_000)
    await follow()
    t.clock.advance(FOLLOW_WITHOUT_LAST_LEDGER_MS)
    await follow()
    const row = await t.service.ctx.storage.db
      .selectFrom('transaction_follows')
      .selectAll()
      .where('id', '=', uuid)
      .executeTakeFirstOrThrow()
    assert.equal(row.state, 'done')
    assert.equal((await readPayload(t, apiKey, uuid)).submission.outcome, null, 'never dropped: it could still be applied')
  })

  describe('two instances', () => {
    let second: RunningService
    before(async () => {
      second = await startService(t.config, { listen: false, workers: false, logger: createLogger('silent'), clock: t.clock })
    })
    after(() => second.stop())

    it('follow each transaction once: one look per transaction, one outcome, one event', async () => {
      const webhook = await registerWebhook(t, apiKey, `${receiver.url}/two`, ['payload.finalized'])
      const transactions = await Promise.all([submitted(), submitted(), submitted()])
      for (const { hash } of transactions)
        rippled.setTransaction(hash, { validated: true, ledgerIndex: 1002, transactionResult: 'tesSUCCESS' })
      t.clock.advance(60_000)
      const looksBefore = rippled.requests.filter((request) => request.command === 'tx').length
      await Promise.all([follow(), second.ctx.follower.followDue(), follow(), second.ctx.follower.followDue()])
      const looks = rippled.requests.filter((request) => request.command === 'tx').slice(looksBefore)
      for (const { hash } of transactions) {
        assert.equal(looks.filter((request) => request.transaction === hash).length, 1, `one look at ${hash}`)
      }
      const rows = await t.service.ctx.storage.db
        .selectFrom('webhook_deliveries')
        .select('payload_uuid')
        .where('webhook_id', '=', webhook.id)
        .execute()
      assert.deepEqual(rows.map((row) => row.payload_uuid).sort(), transactions.map(({ uuid }) => uuid).sort())
    })
  })
})
