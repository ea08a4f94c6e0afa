// The final outcome of a signAndSubmit transaction, learned in the background from the validated ledger: recorded on the
// payload, sent once as payload.finalized to the webhooks that ask for it and to the app's live stream, one follower
// per transaction across instances.
import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, it } from 'node:test'
import { Wallet } from 'xrpl'
import {
  FAST_FOLLOW_WITHOUT_LAST_LEDGER_MS,
  FOLLOW_INTERVAL_MS,
  FOLLOW_LEASE_MS,
  SLOW_FOLLOW_INTERVAL_MS,
} from '../../../src/features/signing/transaction-follower.js'
import { WebhookDispatcher } from '../../../src/features/webhooks/dispatcher/webhook-dispatcher.js'
import { type RunningService, startService } from '../../../src/main.js'
import { openStorage } from '../../../src/platform/db/database.js'
import { migrateUpTo } from '../../../src/platform/db/migrations.js'
import { createLogger } from '../../../src/platform/logger.js'
import { SETTLED_LEDGERS } from '../../../src/platform/xrpl/xrpl-node.js'
import { createTestDatabase, forEachDatabase, withPayloadUpdatesFailing } from '../../support/databases.js'
import { paymentTransaction } from '../../support/fixtures.js'
import { createPayload, readPayload } from '../../support/payloads.js'
import { type RippledDouble, startRippledDouble } from '../../support/rippled-double.js'
import { startTestService, type TestService } from '../../support/service.js'
import { openSse } from '../../support/sse.js'
import { signRequested, WALLET_FIELDS } from '../../support/wallet-signing.js'
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
    rippled.setHistoryStart(1)
    receiver.requests.length = 0
  })

  /** A signAndSubmit payload approved and submitted (Sequence 7); returns its uuid, the transaction's hash and account. */
  const submitted = async (extra: Record<string, unknown> = {}) => {
    const uuid = await createPayload(t, apiKey, { type: 'signAndSubmit', transaction: paymentTransaction() })
    const wallet = Wallet.generate()
    const signed = signRequested(wallet, paymentTransaction(), extra)
    const response = await t.inject({
      method: 'POST',
      url: `/api/v1/sign/${uuid}/approve`,
      payload: { walletAdapter: 'gemwallet', signedTransaction: signed.tx_blob },
    })
    assert.equal(response.statusCode, 200, response.body)
    return { uuid, hash: signed.hash, account: wallet.classicAddress }
  }
  const followRow = (uuid: string) =>
    t.service.ctx.storage.db.selectFrom('transaction_follows').selectAll().where('id', '=', uuid).executeTakeFirstOrThrow()
  const looksAt = (hash: string) => rippled.requests.filter((request) => request.command === 'tx' && request.transaction === hash).length
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
      txHash: hash,
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

  it('is not dropped when it is in its LastLedgerSequence ledger, just validated, whose transactions the node has not written yet', async () => {
    const { uuid, hash } = await submitted()
    rippled.setValidatedLedgerIndex(WALLET_FIELDS.LastLedgerSequence)
    rippled.setTransaction(hash, { validated: false, ledgerIndex: 0, transactionResult: 'tesSUCCESS' })
    await follow()
    assert.equal((await readPayload(t, apiKey, uuid)).submission.outcome, null, 'a miss in a ledger just validated proves nothing')

    rippled.setValidatedLedgerIndex(WALLET_FIELDS.LastLedgerSequence + 1)
    rippled.setTransaction(hash, { validated: true, ledgerIndex: WALLET_FIELDS.LastLedgerSequence, transactionResult: 'tesSUCCESS' })
    t.clock.advance(FOLLOW_INTERVAL_MS)
    await follow()
    assert.equal((await readPayload(t, apiKey, uuid)).submission.outcome, 'succeeded')
  })

  it('is final from the ledger that used its Sequence, whose list holds it before the node writes its transactions', async () => {
    // rippled lists a ledger it fetched to fill a gap in its history as held before it writes that ledger's transactions.
    const { uuid, hash, account } = await submitted()
    const usedIn = WALLET_FIELDS.LastLedgerSequence - 3
    rippled.setAccount(account, { sequence: 7 }, { fromLedger: 1 })
    rippled.setAccount(account, { sequence: 8 }, { fromLedger: usedIn })
    rippled.setTransaction(hash, { validated: false, ledgerIndex: 0, transactionResult: 'tecNO_DST_INSUF_XRP', unwrittenIn: usedIn })
    rippled.setValidatedLedgerIndex(WALLET_FIELDS.LastLedgerSequence + 300)
    await follow()
    const { submission } = await readPayload(t, apiKey, uuid)
    assert.deepEqual(
      [submission.outcome, submission.validatedResult, submission.ledgerIndex, submission.txHash],
      ['failed', 'tecNO_DST_INSUF_XRP', usedIn, hash],
      'its ledger holds it, with its metadata: a miss in the database proves nothing',
    )
  })

  it('a copy of the transaction signed with another key took its Sequence: the outcome is the copy’s, not dropped', async () => {
    // The wallet submitted its own copy of the very payment, signed with the account's regular key: another hash, and
    // the same payment on the ledger. Dropped, the application would ask the user to pay again.
    const { uuid, hash, account } = await submitted()
    const copy = signRequested(Wallet.generate(), paymentTransaction(), { Account: account })
    assert.notEqual(copy.hash, hash)
    const usedIn = WALLET_FIELDS.LastLedgerSequence - 5
    rippled.setAccount(account, { sequence: 7 }, { fromLedger: 1 })
    rippled.setAccount(account, { sequence: 8 }, { fromLedger: usedIn })
    rippled.setTransaction(copy.hash, { validated: true, ledgerIndex: usedIn, transactionResult: 'tesSUCCESS', txBlob: copy.tx_blob })
    rippled.setValidatedLedgerIndex(WALLET_FIELDS.LastLedgerSequence + SETTLED_LEDGERS)
    await follow()
    const view = await readPayload(t, apiKey, uuid)
    assert.equal(view.txHash, hash, 'the payload keeps the transaction its proof verified')
    assert.deepEqual(
      [view.submission.outcome, view.submission.validatedResult, view.submission.ledgerIndex, view.submission.txHash],
      ['succeeded', 'tesSUCCESS', usedIn, copy.hash],
    )

    // A transaction that differs in one field the signer approved is another: this one was dropped.
    const other = await submitted()
    const changed = signRequested(Wallet.generate(), paymentTransaction(), { Account: other.account, Fee: '15' })
    rippled.setAccount(other.account, { sequence: 7 }, { fromLedger: 1 })
    rippled.setAccount(other.account, { sequence: 8 }, { fromLedger: usedIn })
    rippled.setTransaction(changed.hash, { validated: true, ledgerIndex: usedIn, transactionResult: 'tesSUCCESS', txBlob: changed.tx_blob })
    t.clock.advance(FOLLOW_INTERVAL_MS)
    await follow()
    const dropped = (await readPayload(t, apiKey, other.uuid)).submission
    assert.deepEqual([dropped.outcome, dropped.txHash], ['dropped', null])
  })

  it('is dropped on a node without the ledgers before its LastLedgerSequence once its Sequence is unused in a settled ledger past it', async () => {
    const { uuid, account } = await submitted()
    rippled.setAccount(account, { sequence: 7 })
    // The node restarted after LastLedgerSequence: it lacks the 256 ledgers up to it.
    rippled.setValidatedLedgerIndex(WALLET_FIELDS.LastLedgerSequence + 100)
    rippled.setHistoryStart(WALLET_FIELDS.LastLedgerSequence + 50)
    await follow()
    const { submission } = await readPayload(t, apiKey, uuid)
    assert.equal(submission.outcome, 'dropped', 'Sequence 7 unused past the last ledger that could take it: never applied')
  })

  describe('a transaction without LastLedgerSequence', () => {
    it('is followed past its first hour, once a minute, and its outcome recorded whenever a ledger takes it', async () => {
      const { uuid, hash, account } = await submitted({ LastLedgerSequence: undefined })
      rippled.setAccount(account, { sequence: 7 })
      await follow()
      t.clock.advance(FAST_FOLLOW_WITHOUT_LAST_LEDGER_MS)
      await follow()
      assert.equal((await followRow(uuid)).state, 'pending', 'still followed after an hour')
      assert.equal((await readPayload(t, apiKey, uuid)).submission.outcome, null)
      const looks = looksAt(hash)
      t.clock.advance(FOLLOW_INTERVAL_MS)
      await follow()
      assert.equal(looksAt(hash), looks, 'no look 2 seconds on: once a minute now')

      rippled.setValidatedLedgerIndex(2100)
      rippled.setTransaction(hash, { validated: true, ledgerIndex: 2090, transactionResult: 'tesSUCCESS' })
      t.clock.advance(SLOW_FOLLOW_INTERVAL_MS)
      await follow()
      const { submission } = await readPayload(t, apiKey, uuid)
      assert.equal(submission.outcome, 'succeeded')
      assert.equal(submission.ledgerIndex, 2090)
      assert.equal((await followRow(uuid)).state, 'done')
    })

    it('is dropped once another transaction used its Sequence, and only by a node holding every ledger since the Sequence was seen unused', async () => {
      const { uuid, account } = await submitted({ LastLedgerSequence: undefined })
      rippled.setAccount(account, { sequence: 7 })
      await follow()
      assert.equal((await followRow(uuid)).earliest_ledger, 1001, 'from the submission’s answer: the settled ledger says less')
      rippled.setValidatedLedgerIndex(1015)
      await follow()
      assert.equal((await followRow(uuid)).earliest_ledger, 1001, 'not due yet')
      t.clock.advance(FOLLOW_INTERVAL_MS)
      await follow()
      const earliest = 1015 - SETTLED_LEDGERS + 1
      assert.equal(
        (await followRow(uuid)).earliest_ledger,
        earliest,
        'Sequence 7 unused in the settled ledger: no ledger up to it holds it',
      )

      // Another transaction of the account takes Sequence 7; the node restarted and lacks the earliest ledger.
      rippled.setValidatedLedgerIndex(1030)
      rippled.setAccount(account, { sequence: 8 })
      rippled.setHistoryStart(earliest + 1)
      t.clock.advance(FOLLOW_INTERVAL_MS)
      await follow()
      assert.equal((await readPayload(t, apiKey, uuid)).submission.outcome, null, `ledger ${earliest} may hold it`)
      assert.equal((await followRow(uuid)).state, 'pending')

      rippled.setHistoryStart(earliest)
      t.clock.advance(SLOW_FOLLOW_INTERVAL_MS)
      await follow()
      const { submission } = await readPayload(t, apiKey, uuid)
      assert.deepEqual([submission.outcome, submission.validatedResult], ['dropped', null])
      assert.equal((await followRow(uuid)).state, 'done')
    })

    it('is not dropped when its own ledger has just validated and the node has not written that ledger’s transactions yet', async () => {
      const { uuid, hash, account } = await submitted({ LastLedgerSequence: undefined })
      rippled.setAccount(account, { sequence: 7 })
      await follow()
      // The transaction applies in ledger 1001: the account's Sequence moves on there, and rippled lists 1001 as
      // validated and held before its transactions reach its database; tx answers from its cache, not validated.
      rippled.setValidatedLedgerIndex(1001)
      rippled.setAccount(account, { sequence: 8 }, { fromLedger: 1001 })
      rippled.setTransaction(hash, { validated: false, ledgerIndex: 0, transactionResult: 'tesSUCCESS' })
      t.clock.advance(FOLLOW_INTERVAL_MS)
      await follow()
      assert.equal((await readPayload(t, apiKey, uuid)).submission.outcome, null, 'a miss in a ledger just validated proves nothing')

      rippled.setValidatedLedgerIndex(1002)
      rippled.setTransaction(hash, { validated: true, ledgerIndex: 1001, transactionResult: 'tesSUCCESS' })
      t.clock.advance(FOLLOW_INTERVAL_MS)
      await follow()
      assert.equal((await readPayload(t, apiKey, uuid)).submission.outcome, 'succeeded')
    })

    it('whose stored blob no longer decodes is still looked up by its hash, and the follows after it in the batch go on', async () => {
      const broken = await submitted({ LastLedgerSequence: undefined })
      const other = await submitted()
      await t.service.ctx.storage.db.updateTable('payloads').set({ tx_blob: 'ZZ' }).where('uuid', '=', broken.uuid).execute()
      rippled.setTransaction(broken.hash, { validated: true, ledgerIndex: 1001, transactionResult: 'tesSUCCESS' })
      rippled.setTransaction(other.hash, { validated: true, ledgerIndex: 1001, transactionResult: 'tesSUCCESS' })
      await follow()
      assert.equal((await readPayload(t, apiKey, broken.uuid)).submission.outcome, 'succeeded')
      assert.equal((await readPayload(t, apiKey, other.uuid)).submission.outcome, 'succeeded')
    })

    it('whose look fails on an unexpected database error does not hold up the follows after it in the batch, and is looked at again after its lease', async () => {
      const broken = await submitted()
      t.clock.advance(1000)
      const other = await submitted()
      rippled.setTransaction(broken.hash, { validated: true, ledgerIndex: 1001, transactionResult: 'tesSUCCESS' })
      rippled.setTransaction(other.hash, { validated: true, ledgerIndex: 1001, transactionResult: 'tesSUCCESS' })
      await withPayloadUpdatesFailing(t.service.ctx.storage.db, dialect, broken.uuid, follow)
      assert.equal(
        (await readPayload(t, apiKey, other.uuid)).submission.outcome,
        'succeeded',
        'the follow after the failing one is looked at',
      )
      assert.equal((await readPayload(t, apiKey, broken.uuid)).submission.outcome, null)
      t.clock.advance(FOLLOW_LEASE_MS)
      await follow()
      assert.equal((await readPayload(t, apiKey, broken.uuid)).submission.outcome, 'succeeded', 'looked at again once its lease lapsed')
    })

    it('whose first look comes after another transaction used its Sequence is decided from the ledger its submission was answered at', async () => {
      const { uuid, account } = await submitted({ LastLedgerSequence: undefined })
      assert.equal((await followRow(uuid)).earliest_ledger, 1001, 'accepted while ledger 1000 was the validated one')
      // The service was down for a while; meanwhile the account's Sequence 7 went to another transaction.
      rippled.setValidatedLedgerIndex(1100)
      rippled.setAccount(account, { sequence: 8 })
      await follow()
      assert.equal((await readPayload(t, apiKey, uuid)).submission.outcome, 'dropped')
    })

    it('whose Sequence was used before it was ever seen unused is searched back to the ledger that used it, never given up', async () => {
      const { uuid, hash, account } = await submitted({ LastLedgerSequence: undefined })
      // As for a submission recovered after its instance died: no answer named a ledger.
      await t.service.ctx.storage.db.updateTable('transaction_follows').set({ earliest_ledger: null }).where('id', '=', uuid).execute()
      // While the service was down, another transaction of the account took Sequence 7 in ledger 1050; the node has
      // restarted since, and holds the ledgers from 1060 only.
      rippled.setValidatedLedgerIndex(1100)
      rippled.setAccount(account, { sequence: 7 }, { fromLedger: 1 })
      rippled.setAccount(account, { sequence: 8 }, { fromLedger: 1050 })
      rippled.setHistoryStart(1060)
      await follow()
      t.clock.advance(FAST_FOLLOW_WITHOUT_LAST_LEDGER_MS + SLOW_FOLLOW_INTERVAL_MS)
      await follow()
      assert.equal((await readPayload(t, apiKey, uuid)).submission.outcome, null, 'ledger 1050 may hold it: a miss proves nothing')
      assert.equal((await followRow(uuid)).state, 'pending', 'not given up: a node with those ledgers can decide')

      const looks = looksAt(hash)
      rippled.setHistoryStart(1)
      t.clock.advance(SLOW_FOLLOW_INTERVAL_MS)
      await follow()
      assert.equal(looksAt(hash), looks + 1)
      const { submission } = await readPayload(t, apiKey, uuid)
      assert.equal(submission.outcome, 'dropped', 'ledger 1050 holds the other transaction')
      const read = rippled.requests.filter((request) => request.command === 'ledger' && request.transactions === true)
      assert.deepEqual(read.map((request) => request.ledger_index).at(-1), 1050)
    })

    it('that an earlier version stopped following after an hour is followed again, unless its payload has an outcome', async () => {
      const older = await createTestDatabase(dialect, { empty: true })
      const storage = openStorage(older.url)
      try {
        await migrateUpTo(storage, '0014_payload_submission_claimed')
        const db = storage.db
        await db.insertInto('projects').values({ id: 'proj_old', name: 'Old', plan: 'pro', created_at: 1 }).execute()
        const follows = [
          { uuid: 'given-up', lastLedgerSequence: null, outcome: null, state: 'done' },
          { uuid: 'dropped', lastLedgerSequence: 1020, outcome: 'dropped', state: 'done' },
          { uuid: 'succeeded', lastLedgerSequence: null, outcome: 'succeeded', state: 'done' },
          { uuid: 'following', lastLedgerSequence: null, outcome: null, state: 'pending' },
        ]
        for (const { uuid, lastLedgerSequence, outcome, state } of follows) {
          await db
            .insertInto('payloads')
            .values({ uuid, project_id: 'proj_old', type: 'signAndSubmit', status: 'signed', expires_at: 2, created_at: 1, outcome })
            .execute()
          await db
            .insertInto('transaction_follows')
            .values({
              id: uuid,
              tx_hash: `hash-${uuid}`,
              last_ledger_sequence: lastLedgerSequence,
              follow_until: 3,
              state,
              attempts: 1,
              next_attempt_at: 3,
              lease_expires_at: null,
              created_at: 1,
              finished_at: state === 'done' ? 4 : null,
            } as never)
            .execute()
        }
        const migratedAt = Date.now()
        assert.deepEqual(await migrateUpTo(storage, '0015_follow_without_last_ledger'), ['0015_follow_without_last_ledger'])
        const revived = await db
          .selectFrom('transaction_follows')
          .select('follow_until')
          .where('id', '=', 'given-up')
          .executeTakeFirstOrThrow()
        assert.ok(revived.follow_until >= migratedAt + 60 * 60_000, 'looked at for an hour from the migration')
        const rows = await db
          .selectFrom('transaction_follows')
          .select(['id', 'state', 'finished_at', 'earliest_ledger'])
          .orderBy('id')
          .execute()
        assert.deepEqual(rows, [
          { id: 'dropped', state: 'done', finished_at: 4, earliest_ledger: null },
          { id: 'following', state: 'pending', finished_at: null, earliest_ledger: null },
          { id: 'given-up', state: 'pending', finished_at: null, earliest_ledger: null },
          { id: 'succeeded', state: 'done', finished_at: 4, earliest_ledger: null },
        ])
      } finally {
        await storage.close()
        await older.drop()
      }
    })

    it('recorded before the ledger’s hash was kept, names the payload’s own transaction where it succeeded or failed', async () => {
      const older = await createTestDatabase(dialect, { empty: true })
      const storage = openStorage(older.url)
      try {
        await migrateUpTo(storage, '0015_follow_without_last_ledger')
        const db = storage.db
        await db.insertInto('projects').values({ id: 'proj_old', name: 'Old', plan: 'pro', created_at: 1 }).execute()
        for (const outcome of ['succeeded', 'failed', 'dropped', null]) {
          const uuid = outcome ?? 'following'
          await db
            .insertInto('payloads')
            .values({
              uuid,
              project_id: 'proj_old',
              type: 'signAndSubmit',
              status: 'signed',
              expires_at: 2,
              created_at: 1,
              outcome,
              tx_hash: `HASH-${uuid}`,
            })
            .execute()
        }
        assert.deepEqual(await migrateUpTo(storage, '0016_validated_tx_hash'), ['0016_validated_tx_hash'])
        const rows = await db.selectFrom('payloads').select(['uuid', 'validated_tx_hash']).orderBy('uuid').execute()
        assert.deepEqual(rows, [
          { uuid: 'dropped', validated_tx_hash: null },
          { uuid: 'failed', validated_tx_hash: 'HASH-failed' },
          { uuid: 'following', validated_tx_hash: null },
          { uuid: 'succeeded', validated_tx_hash: 'HASH-succeeded' },
        ])
      } finally {
        await storage.close()
        await older.drop()
      }
    })

    it('is never dropped while its account does not exist: a payment could still fund it', async () => {
      const { uuid } = await submitted({ LastLedgerSequence: undefined })
      await follow()
      t.clock.advance(FAST_FOLLOW_WITHOUT_LAST_LEDGER_MS + SLOW_FOLLOW_INTERVAL_MS)
      await follow()
      assert.equal((await readPayload(t, apiKey, uuid)).submission.outcome, null)
      const row = await followRow(uuid)
      assert.deepEqual([row.state, row.earliest_ledger], ['pending', 1001], 'only the submission’s answer bounds it')
    })
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
