import assert from 'node:assert/strict'
import { after, afterEach, before, beforeEach, describe, it, mock } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { decode, Wallet } from 'xrpl'
import { DEFAULT_EXPIRES_IN_SECONDS } from '../../../src/features/payloads/model.js'
import { PayloadTransitions } from '../../../src/features/payloads/transitions.js'
import { payloadTransitionsRepository } from '../../../src/features/payloads/transitions-repository.js'
import { submissionClaimsRepository } from '../../../src/features/signing/submission-claims-repository.js'
import { FOLLOW_INTERVAL_MS, FOLLOW_LEASE_MS } from '../../../src/features/signing/transaction-follower.js'
import { SETTLED_LEDGERS } from '../../../src/platform/xrpl/xrpl-node.js'
import { forEachDatabase, withPayloadUpdatesFailing } from '../../support/databases.js'
import { NODE_NEVER_ASKED, payloadBodies, paymentTransaction } from '../../support/fixtures.js'
import { createPayload, readPayload } from '../../support/payloads.js'
import { type RippledDouble, startRippledDouble } from '../../support/rippled-double.js'
import { bearer, startTestService, type TestService } from '../../support/service.js'
import { openSse } from '../../support/sse.js'
import { signRequested, WALLET_FIELDS } from '../../support/wallet-signing.js'

/** Polls until check() holds (background work runs on real time), or fails after timeoutMs. */
async function eventually(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (!(await check())) {
    if (performance.now() > deadline) assert.fail(`not true within ${timeoutMs} ms`)
    await sleep(25)
  }
}

forEachDatabase('signAndSubmit through the XRPL node', (dialect) => {
  let t: TestService
  let rippled: RippledDouble
  let apiKey: string

  before(async () => {
    rippled = await startRippledDouble()
    // Listening: the signing page's live stream is read over HTTP.
    t = await startTestService(dialect, { listen: true, env: { XRPL_NODE_URL: rippled.url } })
    ;({ apiKey } = await t.createProject('pro'))
  })
  after(async () => {
    await t.stop()
    await rippled.close()
  })
  beforeEach(async () => {
    await rippled.start()
    rippled.setSubmitResult('tesSUCCESS')
    rippled.setServerState('full')
  })

  const create = (transaction: Record<string, unknown> = paymentTransaction()) =>
    createPayload(t, apiKey, { type: 'signAndSubmit', transaction })
  const approve = (uuid: string, signedTransaction: string) =>
    t.inject({ method: 'POST', url: `/api/v1/sign/${uuid}/approve`, payload: { walletAdapter: 'gemwallet', signedTransaction } })
  const appView = (uuid: string) => readPayload(t, apiKey, uuid)
  /** What the signing page reads of the request. */
  const pageView = async (uuid: string) => (await t.inject({ method: 'GET', url: `/api/v1/sign/${uuid}` })).json()
  /** Runs with the node's validated ledger at `index`; its ledger and its history as they were afterwards. */
  const atValidatedLedger = async (index: number, run: () => Promise<void>) => {
    rippled.setValidatedLedgerIndex(index)
    try {
      await run()
    } finally {
      rippled.beforeAnswer(undefined)
      rippled.setHistoryStart(1)
      rippled.setValidatedLedgerIndex(1000)
    }
  }

  for (const engineResult of ['tesSUCCESS', 'terQUEUED', 'tecUNFUNDED_PAYMENT']) {
    it(`${engineResult}: the payload is signed, with the engine result recorded`, async () => {
      rippled.setSubmitResult(engineResult)
      const wallet = Wallet.generate()
      const uuid = await create()
      const signed = signRequested(wallet, paymentTransaction())
      const response = await approve(uuid, signed.tx_blob)
      assert.equal(response.statusCode, 200, response.body)
      assert.equal(response.json().txHash, signed.hash)
      assert.ok(rippled.submitted.includes(signed.tx_blob))
      const view = await appView(uuid)
      assert.equal(view.status, 'signed')
      assert.equal(view.txHash, signed.hash)
      assert.equal(view.submission.engineResult, engineResult)
    })
  }

  for (const engineResult of ['temMALFORMED', 'tefPAST_SEQ', 'tefMAX_LEDGER']) {
    it(`${engineResult}: 422 naming the result, and the payload stays pending`, async () => {
      rippled.setSubmitResult(engineResult)
      const uuid = await create()
      const wallet = Wallet.generate()
      // tefPAST_SEQ: another transaction took Sequence 7, in ledger 990 (the wallet's Sequence was stale).
      rippled.setAccount(wallet.classicAddress, { sequence: 7 }, { fromLedger: 1 })
      rippled.setAccount(wallet.classicAddress, { sequence: 8 }, { fromLedger: 990 })
      const response = await approve(uuid, signRequested(wallet, paymentTransaction()).tx_blob)
      assert.equal(response.statusCode, 422)
      assert.match(response.json().error, new RegExp(`refused the transaction with ${engineResult}`))
      assert.deepEqual(
        response.json().details.map((detail: { field: string }) => detail.field),
        ['signedTransaction'],
      )
      // A used Sequence may have gone to this very payment, submitted by a wallet itself: the advice says so.
      assert.match(
        response.json().details[0].message,
        engineResult === 'tefPAST_SEQ'
          ? /used this Sequence already.*do not sign again unless you mean to pay again/
          : /Nothing was applied/,
      )
      assert.doesNotMatch(response.json().details[0].message, /\.\./, "the node's sentence ends once")
      const view = await appView(uuid)
      assert.equal(view.status, 'pending')
      assert.equal(view.submission.engineResult, null)
    })
  }

  // The node keeps a ter or tel result to try again as the ledger moves on (a sequence gap that closes applies it);
  // tefALREADY: the payer's wallet submitted the very transaction first, and it is in the node's open ledger (for a
  // request open to any account it is a 422, below); a node not in sync passes any blob on to the network whatever its
  // own result, and a peer in sync may apply it.
  for (const [engineResult, serverState] of [
    ['terPRE_SEQ', 'full'],
    ['terRETRY', 'full'],
    ['telINSUF_FEE_P', 'full'],
    ['tefALREADY', 'full'],
    ['tefBAD_AUTH', 'syncing'],
  ] as const) {
    it(`${engineResult} from a node ${serverState === 'full' ? 'in sync' : 'not in sync, which relayed it'}: it may still be applied: 409, and no second signature until the ledger decides`, async () => {
      rippled.setServerState(serverState)
      rippled.setSubmitResult(engineResult)
      const payer = Wallet.generate()
      const uuid = await create(engineResult === 'tefALREADY' ? { ...paymentTransaction(), Account: payer.classicAddress } : undefined)
      assert.equal((await pageView(uuid)).submissionInDoubt, undefined)
      const signed = signRequested(payer, paymentTransaction())
      const response = await approve(uuid, signed.tx_blob)
      assert.equal(response.statusCode, 409, response.body)
      assert.match(response.json().error, new RegExp(`may still apply this transaction \\(${engineResult}: .*do not sign again`))
      assert.equal(response.json().submission, 'in-doubt', 'the page tells it apart from a request answered elsewhere')
      // A page opened again (or on another device) is told too, and offers no second signature.
      assert.equal((await pageView(uuid)).submissionInDoubt, true)
      rippled.setSubmitResult('tesSUCCESS')
      rippled.setServerState('full')
      // The user signs again: with the first blob held by the node, a second would pay twice.
      const second = await approve(uuid, signRequested(payer, paymentTransaction(), { Fee: '15' }).tx_blob)
      assert.equal(second.statusCode, 409, second.body)
      assert.match(second.json().error, /Another signed transaction for this request is being submitted now/)
      assert.equal(second.json().submission, 'in-doubt')
      assert.equal((await appView(uuid)).status, 'pending')

      // The gap closes and the ledger applies it: the recovery records it.
      rippled.setTransaction(signed.hash, {
        validated: true,
        ledgerIndex: 1004,
        transactionResult: 'tesSUCCESS',
        closedAtMs: t.clock.now(),
      })
      t.clock.advance(61_000)
      await t.service.ctx.signing.submissions.recoverLapsed()
      const view = await appView(uuid)
      assert.deepEqual([view.status, view.txHash], ['signed', signed.hash])
      assert.equal((await pageView(uuid)).submissionInDoubt, undefined)
    })
  }

  it('a signing page open on the request (another tab, the phone) hears that its submission is in doubt, and of its release', async () => {
    const uuid = await create()
    const stream = await openSse(`${t.url}/api/v1/sign/${uuid}/events`)
    try {
      const opened = (await stream.nextData()) as { status: string; submissionInDoubt?: boolean }
      assert.deepEqual([opened.status, opened.submissionInDoubt], ['pending', undefined])
      rippled.setSubmitResult('terPRE_SEQ')
      const signed = signRequested(Wallet.generate(), paymentTransaction())
      assert.equal((await approve(uuid, signed.tx_blob)).statusCode, 409)
      const inDoubt = (await stream.nextData()) as { status: string; submissionInDoubt?: boolean }
      assert.deepEqual([inDoubt.status, inDoubt.submissionInDoubt], ['pending', true], 'no change of status, and yet news')
      // The validated ledger passes the blob's LastLedgerSequence without it: released, and the page may offer it again.
      await atValidatedLedger(WALLET_FIELDS.LastLedgerSequence + SETTLED_LEDGERS, async () => {
        t.clock.advance(61_000)
        await t.service.ctx.signing.submissions.recoverLapsed()
      })
      const released = (await stream.nextData()) as { status: string; submissionInDoubt?: boolean }
      assert.deepEqual([released.status, released.submissionInDoubt], ['pending', undefined])
    } finally {
      stream.close()
    }
  })

  it('a page told of a submission in doubt by its own 409 hears when the submission ahead of it is refused and released', async () => {
    const uuid = await create()
    // What the streams of the request are told: a change (a view) or a reminder to read it again (null).
    const told: unknown[] = []
    const stop = t.service.ctx.liveEvents.subscribe(uuid, (change) => told.push(change))
    // The first approval's blob waits at the node's door until let through.
    const node = t.service.ctx.xrplNode!
    const submit = node.submit.bind(node)
    let letThrough = () => {}
    const through = new Promise<void>((resolve) => {
      letThrough = resolve
    })
    const slow = mock.method(node, 'submit', async (blob: string) => {
      await through
      return submit(blob)
    })
    try {
      const first = approve(uuid, signRequested(Wallet.generate(), paymentTransaction()).tx_blob)
      await eventually(async () => (await pageView(uuid)).submissionInDoubt === true)
      // Another tab's approval meanwhile: refused while the first is on its way, so that page waits.
      const second = await approve(uuid, signRequested(Wallet.generate(), paymentTransaction()).tx_blob)
      assert.equal(second.statusCode, 409, second.body)
      assert.equal(second.json().submission, 'in-doubt')
      // The node refuses the first outright: nothing can apply, the claim is released, and the waiting page must hear.
      rippled.setSubmitResult('tefMAX_LEDGER')
      letThrough()
      assert.equal((await first).statusCode, 422)
      assert.equal((await pageView(uuid)).submissionInDoubt, undefined)
      await eventually(async () => told.includes(null))
    } finally {
      letThrough()
      slow.mock.restore()
      stop()
    }
  })

  it('temMALFORMED, then a retry before expiry succeeds', async () => {
    const wallet = Wallet.generate()
    const uuid = await create()
    rippled.setSubmitResult('temMALFORMED')
    assert.equal((await approve(uuid, signRequested(wallet, paymentTransaction(), { Sequence: 1 }).tx_blob)).statusCode, 422)
    rippled.setSubmitResult('tesSUCCESS')
    const retry = signRequested(wallet, paymentTransaction(), { Sequence: 2 })
    const response = await approve(uuid, retry.tx_blob)
    assert.equal(response.statusCode, 200, response.body)
    const view = await appView(uuid)
    assert.equal(view.txHash, retry.hash)
    assert.equal(view.submission.engineResult, 'tesSUCCESS')
  })

  it('a blob the node refuses before applying it (fails local checks) is a 422', async () => {
    rippled.setSubmitError('invalidTransaction', 'fails local checks: Invalid signature.')
    const uuid = await create()
    const response = await approve(uuid, signRequested(Wallet.generate(), paymentTransaction()).tx_blob)
    assert.equal(response.statusCode, 422)
    assert.match(response.json().error, /invalidTransaction/)
    assert.equal((await appView(uuid)).status, 'pending')
  })

  it('a node that is down is 502 and the payload stays pending; once it is back, the same blob goes through', async () => {
    const uuid = await create()
    const signed = signRequested(Wallet.generate(), paymentTransaction())
    await rippled.stop()
    const response = await approve(uuid, signed.tx_blob)
    assert.equal(response.statusCode, 502)
    assert.match(response.json().error, /cannot be reached.*still pending/)
    assert.equal((await appView(uuid)).status, 'pending')
    await rippled.start()
    assert.equal((await approve(uuid, signed.tx_blob)).statusCode, 200)
  })

  it('a signature by a RegularKey counts only once the ledger confirms it is the account’s RegularKey', async () => {
    const owner = Wallet.generate()
    const regularKey = Wallet.generate()
    const requested = { ...paymentTransaction(), Account: owner.classicAddress }
    const uuid = await create(requested)
    const signed = signRequested(regularKey, requested)
    const refused = await approve(uuid, signed.tx_blob)
    assert.equal(refused.statusCode, 422)
    assert.equal(refused.json().details[0].field, 'signedTransaction.SigningPubKey')
    assert.equal(rippled.submitted.includes(signed.tx_blob), false, 'nothing unverified is submitted')

    rippled.setAccount(owner.classicAddress, { regularKey: Wallet.generate().classicAddress })
    assert.equal((await approve(uuid, signed.tx_blob)).statusCode, 422, 'another RegularKey')

    rippled.setAccount(owner.classicAddress, { regularKey: regularKey.classicAddress })
    const accepted = await approve(uuid, signed.tx_blob)
    assert.equal(accepted.statusCode, 200, accepted.body)
    assert.equal(accepted.json().signerAddress, owner.classicAddress)
  })

  it('follows the transaction to its final outcome and records the result, the ledger and the delivered amount', async () => {
    const uuid = await create()
    const signed = signRequested(Wallet.generate(), paymentTransaction())
    assert.equal((await approve(uuid, signed.tx_blob)).statusCode, 200)
    assert.equal((await appView(uuid)).submission.outcome, null, 'not final until a validated ledger says so')
    await t.service.ctx.follower.followDue()
    assert.equal((await appView(uuid)).submission.outcome, null, 'still pending on the ledger')
    rippled.setTransaction(signed.hash, { validated: true, ledgerIndex: 1005, transactionResult: 'tesSUCCESS', deliveredAmount: '1000000' })
    t.clock.advance(FOLLOW_INTERVAL_MS)
    await t.service.ctx.follower.followDue()
    assert.deepEqual((await appView(uuid)).submission, {
      engineResult: 'tesSUCCESS',
      txHash: signed.hash,
      validatedResult: 'tesSUCCESS',
      ledgerIndex: 1005,
      outcome: 'succeeded',
      deliveredAmount: '1000000',
    })
  })

  it('a tec in the validated ledger is failed, whatever the submission said', async () => {
    const uuid = await create()
    const signed = signRequested(Wallet.generate(), paymentTransaction())
    rippled.setTransaction(signed.hash, { validated: true, ledgerIndex: 1005, transactionResult: 'tecPATH_DRY' })
    assert.equal((await approve(uuid, signed.tx_blob)).statusCode, 200)
    await t.service.ctx.follower.followDue()
    assert.deepEqual((await appView(uuid)).submission, {
      engineResult: 'tesSUCCESS',
      txHash: signed.hash,
      validatedResult: 'tecPATH_DRY',
      ledgerIndex: 1005,
      outcome: 'failed',
      deliveredAmount: null,
    })
  })

  it('is dropped once the validated ledger passes LastLedgerSequence without the transaction', async () => {
    const uuid = await create()
    const signed = signRequested(Wallet.generate(), paymentTransaction())
    assert.equal((await approve(uuid, signed.tx_blob)).statusCode, 200)
    try {
      rippled.setValidatedLedgerIndex(WALLET_FIELDS.LastLedgerSequence + SETTLED_LEDGERS)
      await t.service.ctx.follower.followDue()
    } finally {
      rippled.setValidatedLedgerIndex(1000)
    }
    assert.deepEqual((await appView(uuid)).submission, {
      engineResult: 'tesSUCCESS',
      txHash: null,
      validatedResult: null,
      ledgerIndex: null,
      outcome: 'dropped',
      deliveredAmount: null,
    })
  })

  it('is not dropped while the node lacks ledgers up to LastLedgerSequence: a restarted node cannot tell', async () => {
    const uuid = await create()
    const signed = signRequested(Wallet.generate(), paymentTransaction())
    assert.equal((await approve(uuid, signed.tx_blob)).statusCode, 200)
    await atValidatedLedger(WALLET_FIELDS.LastLedgerSequence + 10, async () => {
      rippled.setHistoryStart(WALLET_FIELDS.LastLedgerSequence - 10)
      await t.service.ctx.follower.followDue()
      assert.equal((await appView(uuid)).submission?.outcome, null, 'the transaction may be in a ledger the node lacks')
      rippled.setHistoryStart(1)
      t.clock.advance(60_000)
      await t.service.ctx.follower.followDue()
    })
    assert.equal((await appView(uuid)).submission?.outcome, 'dropped')
  })

  it('a node whose answer arrives after the request expired: the ledger has the transaction, and the request is signed', async () => {
    const uuid = await create()
    const signed = signRequested(Wallet.generate(), paymentTransaction())
    const node = t.service.ctx.xrplNode!
    const submit = node.submit.bind(node)
    const slow = mock.method(node, 'submit', async (blob: string) => {
      const answer = await submit(blob)
      t.clock.advance((DEFAULT_EXPIRES_IN_SECONDS + 1) * 1000)
      return answer
    })
    try {
      const response = await approve(uuid, signed.tx_blob)
      assert.equal(response.statusCode, 200, response.body)
    } finally {
      slow.mock.restore()
    }
    const view = await appView(uuid)
    assert.deepEqual([view.status, view.txHash], ['signed', signed.hash])
  })

  it('two approvals of the same blob racing: exactly one resolves, the other gets 409', async () => {
    const uuid = await create()
    const signed = signRequested(Wallet.generate(), paymentTransaction())
    const responses = await Promise.all([approve(uuid, signed.tx_blob), approve(uuid, signed.tx_blob), approve(uuid, signed.tx_blob)])
    assert.deepEqual(responses.map((response) => response.statusCode).sort(), [200, 409, 409])
    assert.equal((await appView(uuid)).txHash, signed.hash)
  })

  it('an approval answered 503 after the ledger took its blob, sent again, is not told to sign again: the recovery records the transaction', async () => {
    const uuid = await create()
    const signed = signRequested(Wallet.generate(), paymentTransaction())
    // The ledger takes the blob, and the move to signed waits 5 s for its group and fails as not written
    // (platform/db/commit-groups.ts): the database stopped answering.
    const notWritten = mock.method(
      PayloadTransitions.prototype,
      'transition',
      () => Promise.reject(Object.assign(new Error('The database did not take the request within 5000 ms'), { code: 'ETIMEDOUT' })),
      { times: 1 },
    )
    const first = await approve(uuid, signed.tx_blob)
    notWritten.mock.restore()
    assert.equal(first.statusCode, 503, first.body)
    assert.equal((await appView(uuid)).status, 'pending')

    // The wallet sends the same blob again. The ledger has applied it, so refuses it as a repeat.
    rippled.setTransaction(signed.hash, { validated: true, ledgerIndex: 1004, transactionResult: 'tesSUCCESS', closedAtMs: t.clock.now() })
    rippled.setSubmitResult('tefPAST_SEQ')
    const again = await approve(uuid, signed.tx_blob)
    assert.equal(again.statusCode, 409, again.body)
    assert.match(again.json().error, /submitted for this request before.*outcome is being checked/)
    const claims = () =>
      t.service.ctx.storage.db.selectFrom('submission_claims').select('tx_hash').where('payload_uuid', '=', uuid).execute()
    assert.deepEqual(await claims(), [{ tx_hash: signed.hash }], 'the submission stays claimed, for the recovery')

    t.clock.advance(61_000)
    await t.service.ctx.signing.submissions.recoverLapsed()
    const view = await appView(uuid)
    assert.deepEqual([view.status, view.txHash], ['signed', signed.hash], 'the transaction the ledger applied is recorded')
    assert.deepEqual(await claims(), [])
  })

  it('an old transaction of the ledger that matches the request does not resolve it: the ledger refuses it, and it is a 422', async () => {
    // Someone's payment, validated before this request existed, with the Destination and Amount it asks for.
    const payer = Wallet.generate()
    const old = signRequested(payer, paymentTransaction())
    const closedAtMs = t.clock.now() - 60 * 60_000
    rippled.setTransaction(old.hash, { validated: true, ledgerIndex: 900, transactionResult: 'tesSUCCESS', closedAtMs })
    rippled.setAccount(payer.classicAddress, { sequence: 7 }, { fromLedger: 1 })
    rippled.setAccount(payer.classicAddress, { sequence: 8 }, { fromLedger: 900 })
    rippled.setSubmitResult('tefPAST_SEQ')
    const uuid = await create()
    const response = await approve(uuid, old.tx_blob)
    assert.equal(response.statusCode, 422, response.body)
    assert.equal((await appView(uuid)).status, 'pending')
    // Sent again, it is still this service's first submission of it for this request that the ledger refused.
    assert.equal((await approve(uuid, old.tx_blob)).statusCode, 422)
    assert.equal((await appView(uuid)).status, 'pending')
  })

  it('someone else’s payment in the open ledger does not resolve a request open to any account: 422, nothing held', async () => {
    // Alice paid the shop directly. While her payment waits in the open ledger (public: nodes relay and stream proposed
    // transactions), Bob presents her blob for his own request, which names no Account. The node has it already.
    const uuid = await create()
    const alicePaid = signRequested(Wallet.generate(), paymentTransaction())
    rippled.setSubmitResult('tefALREADY')
    const response = await approve(uuid, alicePaid.tx_blob)
    assert.equal(response.statusCode, 422, response.body)
    assert.match(response.json().error, /submitted elsewhere, so it cannot resolve this request/)
    assert.equal((await pageView(uuid)).submissionInDoubt, undefined, 'nothing is held for the recovery')
    // Her payment is validated: the recovery has nothing to take for Bob's request, which he still has to pay.
    rippled.setTransaction(alicePaid.hash, {
      validated: true,
      ledgerIndex: 1001,
      transactionResult: 'tesSUCCESS',
      closedAtMs: t.clock.now(),
    })
    t.clock.advance(61_000)
    await t.service.ctx.signing.submissions.recoverLapsed()
    const view = await appView(uuid)
    assert.deepEqual([view.status, view.signerAddress], ['pending', null])
  })

  describe('tefPAST_SEQ: the Sequence is used, perhaps by this very approval, submitted elsewhere', () => {
    /**
     * A payer whose Sequence 7 was taken in ledger `usedIn`, a request that names it as the Account (its payer bound),
     * and the request's transaction it signed with Sequence 7.
     */
    const payerUsedIn = async (usedIn: number) => {
      const payer = Wallet.generate()
      rippled.setAccount(payer.classicAddress, { sequence: 7 }, { fromLedger: 1 })
      rippled.setAccount(payer.classicAddress, { sequence: 8 }, { fromLedger: usedIn })
      const uuid = await create({ ...paymentTransaction(), Account: payer.classicAddress })
      return { uuid, payer, signed: signRequested(payer, paymentTransaction()) }
    }
    /** The payment `payer` signed otherwise: with another key (a regular key's), or with `extra` fields. */
    const signedOtherwise = (payer: Wallet, extra: Record<string, unknown> = {}) =>
      signRequested(Wallet.generate(), paymentTransaction(), { Account: payer.classicAddress, ...extra })
    afterEach(() => {
      rippled.setSubmitResult('tesSUCCESS')
      rippled.setLedgerCloseTimes(undefined)
    })

    it('the very blob, on the ledger already: a 422 that says it was applied and not to pay again, since anyone could present it', async () => {
      // The wallet submitted it itself, or someone took it from the ledger, where it is public: the two look alike.
      const { uuid, signed } = await payerUsedIn(998)
      rippled.setTransaction(signed.hash, { validated: true, ledgerIndex: 998, transactionResult: 'tesSUCCESS', closedAtMs: t.clock.now() })
      rippled.setSubmitResult('tefPAST_SEQ')
      const response = await approve(uuid, signed.tx_blob)
      assert.equal(response.statusCode, 422, response.body)
      assert.match(
        response.json().error,
        /already holds this very transaction, submitted elsewhere.*do not sign again unless you mean to pay again/,
      )
      assert.equal((await appView(uuid)).status, 'pending')
    })

    it('a copy signed with another key of the account took the Sequence: signed, and the outcome is the copy’s', async () => {
      const { uuid, payer, signed } = await payerUsedIn(999)
      const copy = signedOtherwise(payer)
      // In ledger 999, which the node has not written to its database yet: its list holds the copy.
      rippled.setTransaction(copy.hash, {
        validated: false,
        ledgerIndex: 0,
        transactionResult: 'tesSUCCESS',
        txBlob: copy.tx_blob,
        unwrittenIn: 999,
      })
      rippled.setLedgerCloseTimes(() => t.clock.now())
      rippled.setSubmitResult('tefPAST_SEQ')
      const response = await approve(uuid, signed.tx_blob)
      assert.equal(response.statusCode, 200, response.body)
      assert.equal((await appView(uuid)).status, 'signed')
      // Its hash never validated: the follower decides from the Sequence once LastLedgerSequence is settled.
      await atValidatedLedger(WALLET_FIELDS.LastLedgerSequence + SETTLED_LEDGERS, () =>
        t.service.ctx.follower.followDue().then(() => undefined),
      )
      const { submission } = await appView(uuid)
      assert.deepEqual(
        [submission.outcome, submission.txHash, submission.ledgerIndex, submission.deliveredAmount],
        ['succeeded', copy.hash, 999, '1000000'],
        'the amount delivered, as tx fills it in where the metadata leaves it out',
      )
      assert.equal((await approve(uuid, signRequested(payer, paymentTransaction(), { Sequence: 8 }).tx_blob)).statusCode, 409)
    })

    it('a copy validated long before a late approval, after the request existed, still resolves it: no second payment', async () => {
      // The wallet's copy validated a minute after the request; the approval reaches the service ten minutes later.
      const payer = Wallet.generate()
      rippled.setAccount(payer.classicAddress, { sequence: 7 }, { fromLedger: 1 })
      rippled.setAccount(payer.classicAddress, { sequence: 8 }, { fromLedger: 995 })
      const transaction = { ...paymentTransaction(), Account: payer.classicAddress }
      const uuid = await createPayload(t, apiKey, { type: 'signAndSubmit', transaction, options: { expiresIn: 3600 } })
      const copy = signRequested(payer, paymentTransaction(), { Flags: 0x80000000 })
      const listed = { validated: true, ledgerIndex: 995, transactionResult: 'tesSUCCESS', closedAtMs: t.clock.now() + 60_000 }
      rippled.setTransaction(copy.hash, { ...listed, txBlob: copy.tx_blob })
      rippled.setLedgerCloseTimes(() => t.clock.now() - 9 * 60_000)
      t.clock.advance(10 * 60_000)
      rippled.setSubmitResult('tefPAST_SEQ')
      const response = await approve(uuid, signRequested(payer, paymentTransaction()).tx_blob)
      assert.equal(response.statusCode, 200, response.body)
      assert.equal((await appView(uuid)).status, 'signed')
    })

    it('the copy that resolved a request, taken from the ledger, resolves no second one: its proof went with the first', async () => {
      const { uuid, payer, signed } = await payerUsedIn(996)
      // The wallet's own copy: the payer's key, tfFullyCanonicalSig added.
      const copy = signRequested(payer, paymentTransaction(), { Flags: 0x80000000 })
      const listed = { validated: true, ledgerIndex: 996, transactionResult: 'tesSUCCESS', closedAtMs: t.clock.now(), txBlob: copy.tx_blob }
      rippled.setTransaction(copy.hash, listed)
      rippled.setLedgerCloseTimes(() => t.clock.now())
      rippled.setSubmitResult('tefPAST_SEQ')
      const first = await approve(uuid, signed.tx_blob)
      assert.equal(first.statusCode, 200, first.body)
      // Someone presents the copy itself, public on the ledger, for another request naming the same payer.
      const other = await create({ ...paymentTransaction(), Account: payer.classicAddress })
      const response = await approve(other, copy.tx_blob)
      assert.equal(response.statusCode, 409, response.body)
      assert.match(response.json().error, /already used by another request/)
      assert.equal((await appView(other)).status, 'pending')
    })

    it('a node not in sync relays a tefPAST_SEQ, but no peer can apply a used Sequence: the 422 stands, nothing is held', async () => {
      rippled.setServerState('syncing')
      const uuid = await create()
      const alicePaid = signRequested(Wallet.generate(), paymentTransaction())
      rippled.setSubmitResult('tefPAST_SEQ')
      const response = await approve(uuid, alicePaid.tx_blob)
      assert.equal(response.statusCode, 422, response.body)
      assert.equal((await pageView(uuid)).submissionInDoubt, undefined)
    })

    it('someone else’s payment on the ledger does not resolve a request open to any account: 422, whenever it was made', async () => {
      // Alice paid the shop directly, after Bob's request was created; her blob is public. Bob's request names no Account.
      const uuid = await create()
      const alice = Wallet.generate()
      rippled.setAccount(alice.classicAddress, { sequence: 7 }, { fromLedger: 1 })
      rippled.setAccount(alice.classicAddress, { sequence: 8 }, { fromLedger: 999 })
      const alicePaid = signRequested(alice, paymentTransaction())
      rippled.setTransaction(alicePaid.hash, {
        validated: true,
        ledgerIndex: 999,
        transactionResult: 'tesSUCCESS',
        closedAtMs: t.clock.now(),
      })
      rippled.setSubmitResult('tefPAST_SEQ')
      const response = await approve(uuid, alicePaid.tx_blob)
      assert.equal(response.statusCode, 422, response.body)
      assert.equal((await appView(uuid)).status, 'pending')
      const asked = rippled.requests.filter(
        (request) => request.account === alice.classicAddress && typeof request.ledger_index === 'number',
      )
      assert.deepEqual(asked, [], 'the ledger is not asked who used the Sequence')
    })

    it('a validated transaction whose close time the ledger does not give is not taken for the request’s: 422', async () => {
      const { uuid, signed } = await payerUsedIn(998)
      rippled.setTransaction(signed.hash, { validated: true, ledgerIndex: 998, transactionResult: 'tesSUCCESS' })
      rippled.setSubmitResult('tefPAST_SEQ')
      assert.equal((await approve(uuid, signed.tx_blob)).statusCode, 422)
    })

    it('one payment resolves one request: a copy signed otherwise, for a second request of the same content, is a 422', async () => {
      // The payer pays request A, then signs the very payment again (tfFullyCanonicalSig added: another proof) for B.
      const { uuid: first, payer, signed } = await payerUsedIn(1001)
      const second = await create({ ...paymentTransaction(), Account: payer.classicAddress })
      assert.equal((await approve(first, signed.tx_blob)).statusCode, 200)
      rippled.setTransaction(signed.hash, {
        validated: true,
        ledgerIndex: 1001,
        transactionResult: 'tesSUCCESS',
        closedAtMs: t.clock.now(),
      })
      const again = signRequested(payer, paymentTransaction(), { Flags: 0x80000000 })
      assert.notEqual(again.hash, signed.hash)
      rippled.setSubmitResult('tefPAST_SEQ')
      await atValidatedLedger(1002, async () => {
        const response = await approve(second, again.tx_blob)
        assert.equal(response.statusCode, 422, response.body)
      })
      assert.equal((await appView(second)).status, 'pending')
    })

    it('one payment resolves one request: two requests signed at once, one applied, only its request succeeds', async () => {
      // Both blobs accepted into the open ledger; the ledger applies the first; the second's slot goes to its copy.
      const { uuid: first, payer, signed } = await payerUsedIn(1005)
      const second = await create({ ...paymentTransaction(), Account: payer.classicAddress })
      const again = signRequested(payer, paymentTransaction(), { Flags: 0x80000000 })
      assert.equal((await approve(first, signed.tx_blob)).statusCode, 200)
      assert.equal((await approve(second, again.tx_blob)).statusCode, 200)
      rippled.setTransaction(signed.hash, { validated: true, ledgerIndex: 1005, transactionResult: 'tesSUCCESS' })
      await atValidatedLedger(WALLET_FIELDS.LastLedgerSequence + SETTLED_LEDGERS, async () => {
        await t.service.ctx.follower.followDue()
        await t.service.ctx.follower.followDue()
      })
      const [a, b] = [(await appView(first)).submission, (await appView(second)).submission]
      assert.deepEqual([a.outcome, a.txHash], ['succeeded', signed.hash])
      assert.deepEqual([b.outcome, b.txHash], ['dropped', null], 'the payment counted for the first request already')
    })

    it('used in the open ledger only, by a transaction not validated yet: 409 in doubt, and the claim stays for the recovery', async () => {
      const { uuid, signed } = await payerUsedIn(1001)
      rippled.setSubmitResult('tefPAST_SEQ')
      const response = await approve(uuid, signed.tx_blob)
      assert.equal(response.statusCode, 409, response.body)
      assert.equal(response.json().submission, 'in-doubt')
      assert.match(response.json().error, /Sequence was used already, perhaps by this very transaction/)
      const claims = await t.service.ctx.storage.db
        .selectFrom('submission_claims')
        .select('tx_hash')
        .where('payload_uuid', '=', uuid)
        .execute()
      assert.deepEqual(claims, [{ tx_hash: signed.hash }])
      assert.equal((await appView(uuid)).status, 'pending')

      // The transaction that took it was another (a wallet's stale Sequence): once a settled ledger shows the Sequence
      // used, the recovery releases the claim, well before LastLedgerSequence (1020) passes.
      await atValidatedLedger(1001 + SETTLED_LEDGERS, async () => {
        t.clock.advance(61_000)
        await t.service.ctx.signing.submissions.recoverLapsed()
      })
      const left = await t.service.ctx.storage.db
        .selectFrom('submission_claims')
        .select('tx_hash')
        .where('payload_uuid', '=', uuid)
        .execute()
      assert.deepEqual(left, [], 'released: the user may sign again')
      assert.equal((await appView(uuid)).status, 'pending')
    })
  })

  describe('the recovery of a submission whose answer never came (the node could not answer: 502)', () => {
    const claims = (uuid: string) =>
      t.service.ctx.storage.db.selectFrom('submission_claims').select('tx_hash').where('payload_uuid', '=', uuid).execute()
    /** The node has the blob but goes down before answering: 502, and the submission's claim stays for the recovery. */
    const approveUnanswered = async (uuid: string, blob: string) => {
      rippled.hold('submit', true)
      const answered = approve(uuid, blob)
      try {
        await eventually(async () => rippled.requests.some((request) => request.command === 'submit' && request.tx_blob === blob))
        await rippled.stop()
      } finally {
        rippled.hold('submit', false)
      }
      const response = await answered
      await rippled.start()
      assert.equal(response.statusCode, 502, response.body)
      assert.equal((await claims(uuid)).length, 1)
    }
    /** An approval left unanswered, by an account whose Sequence in the validated ledger is `sequence`. */
    const unansweredWithSequence = async (sequence: number) => {
      const uuid = await create()
      const wallet = Wallet.generate()
      const signed = signRequested(wallet, paymentTransaction())
      await approveUnanswered(uuid, signed.tx_blob)
      rippled.setAccount(wallet.classicAddress, { sequence })
      return { uuid, signed, wallet }
    }
    /**
     * An approval left unanswered of a blob without LastLedgerSequence, Sequence `sequence`, by an account whose Sequence
     * in the validated ledger is `accountSequence` (undefined: the account does not exist); `sent` counts its submissions.
     */
    const unansweredWithoutLastLedger = async (sequence: number, accountSequence: number | undefined) => {
      const wallet = Wallet.generate()
      const transaction = paymentTransaction()
      const signed = wallet.sign({ Account: wallet.classicAddress, Fee: '12', Sequence: sequence, ...transaction } as Parameters<
        Wallet['sign']
      >[0])
      const uuid = await create(transaction)
      await approveUnanswered(uuid, signed.tx_blob)
      if (accountSequence !== undefined) rippled.setAccount(wallet.classicAddress, { sequence: accountSequence })
      const sent = () => rippled.submitted.filter((blob) => blob === signed.tx_blob).length
      return { uuid, signed, wallet, sent }
    }
    /** What an approval's submission records, for the claims' own tests. */
    const intentOf = (uuid: string, signed: { hash: string; tx_blob: string }) => ({
      payloadUuid: uuid,
      txHash: signed.hash,
      txBlob: signed.tx_blob,
      signerAddress: 'r',
      walletAdapter: 'gemwallet',
      proofKey: 'k',
      submittedAtMs: t.clock.now(),
    })
    /** The ledger validated the transaction (tesSUCCESS), closing now. */
    const validatedIn = (hash: string, ledgerIndex: number) =>
      rippled.setTransaction(hash, { validated: true, ledgerIndex, transactionResult: 'tesSUCCESS', closedAtMs: t.clock.now() })
    const recoverAfterTheLease = async () => {
      t.clock.advance(61_000)
      await t.service.ctx.signing.submissions.recoverLapsed()
    }

    it('a claim says, in the statement that takes it, whether one for the same blob was there: a read before it could be stale', async () => {
      const uuid = await create()
      const signed = signRequested(Wallet.generate(), paymentTransaction())
      const db = t.service.ctx.storage.db
      const intent = intentOf(uuid, signed)
      assert.deepEqual(await submissionClaimsRepository.claim(db, intent, t.clock.now() + 60_000), { submittedBefore: false })
      const later = { ...intent, submittedAtMs: t.clock.now() + 1000 }
      assert.deepEqual(await submissionClaimsRepository.claim(db, later, t.clock.now() + 60_000), { submittedBefore: true })
      const [row] = await db.selectFrom('submission_claims').select(['submitted_at', 'attempts']).where('payload_uuid', '=', uuid).execute()
      assert.deepEqual(row, { submitted_at: intent.submittedAtMs, attempts: 2 }, 'the first submission’s time is kept')
      const other = { ...intent, txHash: 'F'.repeat(64) }
      assert.equal(await submissionClaimsRepository.claim(db, other, t.clock.now() + 60_000), undefined, 'another blob waits')
      await submissionClaimsRepository.release(db, uuid, signed.hash)
      assert.deepEqual(await submissionClaimsRepository.claim(db, intent, t.clock.now() + 60_000), { submittedBefore: false })
      await submissionClaimsRepository.release(db, uuid, signed.hash)
    })

    it('a blob the node knows but no validated ledger holds (a refusal rippled caches) does not resolve the request', async () => {
      const uuid = await create()
      const signed = signRequested(Wallet.generate(), paymentTransaction())
      await approveUnanswered(uuid, signed.tx_blob)
      // rippled answers `tx` from its cache for a blob it refused (tefPAST_SEQ...), as for one in its open ledger.
      rippled.setTransaction(signed.hash, { validated: false, ledgerIndex: 0, transactionResult: 'tefPAST_SEQ' })
      await recoverAfterTheLease()
      assert.equal((await appView(uuid)).status, 'pending', 'not signed on the node’s word alone')
      assert.deepEqual(await claims(uuid), [{ tx_hash: signed.hash }], 'held until the ledger decides')

      // The validated ledger passes LastLedgerSequence without it: it can never apply, and the user may sign again.
      rippled.setValidatedLedgerIndex(WALLET_FIELDS.LastLedgerSequence + SETTLED_LEDGERS)
      try {
        await recoverAfterTheLease()
      } finally {
        rippled.setValidatedLedgerIndex(1000)
      }
      assert.equal((await appView(uuid)).status, 'pending')
      assert.deepEqual(await claims(uuid), [])
    })

    it('past LastLedgerSequence, a node that lacks the ledger that used the Sequence does not get the claim released: one that holds it does', async () => {
      // The account's Sequence went to a transaction three ledgers before LastLedgerSequence: this one, or another.
      const { uuid, signed, wallet } = await unansweredWithSequence(WALLET_FIELDS.Sequence)
      const usedIn = WALLET_FIELDS.LastLedgerSequence - 3
      rippled.setAccount(wallet.classicAddress, { sequence: WALLET_FIELDS.Sequence + 1 }, { fromLedger: usedIn })
      await atValidatedLedger(WALLET_FIELDS.LastLedgerSequence + 10, async () => {
        rippled.setHistoryStart(usedIn)
        await recoverAfterTheLease()
        assert.deepEqual(await claims(uuid), [{ tx_hash: signed.hash }], 'without the ledger before, the first that used it is unknown')
        // It holds that ledger, and the one before, where the Sequence was still unused.
        rippled.setHistoryStart(usedIn - 1)
        await recoverAfterTheLease()
      })
      assert.deepEqual(await claims(uuid), [], 'that ledger lists another transaction')
      assert.equal((await appView(uuid)).status, 'pending')
    })

    it('past LastLedgerSequence, a transaction in the ledger that used its Sequence, not yet in the node’s database, is signed', async () => {
      // rippled lists a ledger it fetched to fill a gap as held before it writes that ledger's transactions.
      const { uuid, signed, wallet } = await unansweredWithSequence(WALLET_FIELDS.Sequence)
      const usedIn = WALLET_FIELDS.LastLedgerSequence - 3
      rippled.setAccount(wallet.classicAddress, { sequence: WALLET_FIELDS.Sequence + 1 }, { fromLedger: usedIn })
      rippled.setTransaction(signed.hash, { validated: false, ledgerIndex: 0, transactionResult: 'tesSUCCESS', unwrittenIn: usedIn })
      await atValidatedLedger(WALLET_FIELDS.LastLedgerSequence + 300, async () => {
        await recoverAfterTheLease()
      })
      assert.deepEqual(await claims(uuid), [])
      assert.deepEqual([(await appView(uuid)).status, (await appView(uuid)).txHash], ['signed', signed.hash], 'the ledger lists it')
    })

    it('past LastLedgerSequence on a node without the history, an account whose Sequence is unused never applied it: released', async () => {
      const { uuid } = await unansweredWithSequence(WALLET_FIELDS.Sequence)
      await atValidatedLedger(WALLET_FIELDS.LastLedgerSequence + 500, async () => {
        // The service was down for half an hour: the node keeps the last 256 ledgers only.
        rippled.setHistoryStart(WALLET_FIELDS.LastLedgerSequence + 500 - 255)
        await recoverAfterTheLease()
      })
      assert.deepEqual(await claims(uuid), [])
      assert.equal((await appView(uuid)).status, 'pending')
    })

    it('past LastLedgerSequence on a node without the history, a server behind it that shows the Sequence unused before LastLedgerSequence releases nothing', async () => {
      const { uuid, signed, wallet } = await unansweredWithSequence(WALLET_FIELDS.Sequence)
      // It applied two ledgers before its LastLedgerSequence.
      rippled.setAccount(
        wallet.classicAddress,
        { sequence: WALLET_FIELDS.Sequence + 1 },
        { fromLedger: WALLET_FIELDS.LastLedgerSequence - 2 },
      )
      await atValidatedLedger(WALLET_FIELDS.LastLedgerSequence + 500, async () => {
        rippled.setHistoryStart(WALLET_FIELDS.LastLedgerSequence + 500 - 255)
        // A load-balanced address: the look's next requests reach a server 5 ledgers short of LastLedgerSequence.
        rippled.beforeAnswer((request) => {
          if (request.command !== 'tx') return
          rippled.setValidatedLedgerIndex(WALLET_FIELDS.LastLedgerSequence - 5)
          rippled.setHistoryStart(1)
        })
        await recoverAfterTheLease()
      })
      assert.deepEqual(await claims(uuid), [{ tx_hash: signed.hash }], 'unused in a ledger before LastLedgerSequence says nothing')
    })

    it('past LastLedgerSequence on a node without the history, an account no longer in the ledger keeps its claim: it may have applied it, then been deleted', async () => {
      // No account: deleted after its transaction applied (AccountDelete can come soon after an account's last transaction).
      const uuid = await create()
      const signed = signRequested(Wallet.generate(), paymentTransaction())
      await approveUnanswered(uuid, signed.tx_blob)
      await atValidatedLedger(WALLET_FIELDS.LastLedgerSequence + 500, async () => {
        rippled.setHistoryStart(WALLET_FIELDS.LastLedgerSequence + 500 - 255)
        await recoverAfterTheLease()
      })
      assert.deepEqual(await claims(uuid), [{ tx_hash: signed.hash }])
      assert.equal((await approve(uuid, signRequested(Wallet.generate(), paymentTransaction()).tx_blob)).statusCode, 409)
    })

    it('a claim whose stored blob no longer decodes stays claimed, and the claims after it in the batch are looked at', async () => {
      const broken = await unansweredWithSequence(WALLET_FIELDS.Sequence)
      const other = await unansweredWithSequence(WALLET_FIELDS.Sequence)
      await t.service.ctx.storage.db
        .updateTable('submission_claims')
        .set({ tx_blob: 'ZZ' })
        .where('payload_uuid', '=', broken.uuid)
        .execute()
      validatedIn(other.signed.hash, 1004)
      await recoverAfterTheLease()
      assert.equal((await appView(other.uuid)).status, 'signed')
      assert.deepEqual(await claims(broken.uuid), [{ tx_hash: broken.signed.hash }])
    })

    it('a claim whose look fails on an unexpected database error does not hold up the claims after it in the batch, and is looked at again after its lease', async () => {
      const broken = await unansweredWithSequence(WALLET_FIELDS.Sequence)
      t.clock.advance(1000)
      const other = await unansweredWithSequence(WALLET_FIELDS.Sequence)
      validatedIn(broken.signed.hash, 1004)
      validatedIn(other.signed.hash, 1004)
      await withPayloadUpdatesFailing(t.service.ctx.storage.db, dialect, broken.uuid, recoverAfterTheLease)
      assert.equal((await appView(other.uuid)).status, 'signed', 'the claim after the failing one is looked at')
      assert.equal((await appView(broken.uuid)).status, 'pending')
      t.clock.advance(FOLLOW_LEASE_MS)
      await t.service.ctx.signing.submissions.recoverLapsed()
      assert.equal((await appView(broken.uuid)).status, 'signed', 'looked at again once its lease lapsed')
    })

    it('a transaction the ledger validated before the request existed, sent as its proof, does not resolve it', async () => {
      // Someone's payment with the Destination and Amount the request asks for, validated ten minutes before it.
      const old = signRequested(Wallet.generate(), paymentTransaction())
      const tenMinutesAgo = t.clock.now() - 10 * 60_000
      const uuid = await create()
      await approveUnanswered(uuid, old.tx_blob)
      rippled.setTransaction(old.hash, { validated: true, ledgerIndex: 900, transactionResult: 'tesSUCCESS', closedAtMs: tenMinutesAgo })
      await recoverAfterTheLease()
      assert.equal((await appView(uuid)).status, 'pending')
      assert.deepEqual(await claims(uuid), [], 'released: that hash can never be applied again')
    })

    it('someone’s payment validated after the request existed, but well before it was presented as its proof, does not resolve it', async () => {
      // Alice paid the shop directly a minute after Bob's request (open to any account) was created; nine minutes later
      // Bob presents her public blob, and the node's answer is lost (or the node, not in sync, relays it).
      const transaction = paymentTransaction()
      const uuid = await createPayload(t, apiKey, { type: 'signAndSubmit', transaction, options: { expiresIn: 3600 } })
      const alicePaid = signRequested(Wallet.generate(), paymentTransaction())
      rippled.setTransaction(alicePaid.hash, {
        validated: true,
        ledgerIndex: 990,
        transactionResult: 'tesSUCCESS',
        closedAtMs: t.clock.now() + 60_000,
      })
      t.clock.advance(10 * 60_000)
      await approveUnanswered(uuid, alicePaid.tx_blob)
      await recoverAfterTheLease()
      assert.equal((await appView(uuid)).status, 'pending')
      assert.deepEqual(await claims(uuid), [], 'released: validated long before this service submitted it')
    })

    it('a request whose expiry passes while its submission is in doubt stays pending, refuses new approvals, and is signed once the ledger validates it', async () => {
      const uuid = await create()
      const signed = signRequested(Wallet.generate(), paymentTransaction())
      await approveUnanswered(uuid, signed.tx_blob)
      const createdAtMs = t.clock.now()
      t.clock.advance((DEFAULT_EXPIRES_IN_SECONDS + 1) * 1000)
      await t.service.ctx.payloads.expireOverdue()
      // An application polling it meanwhile reads it without a write: a move out of pending would wait for the claim.
      const moves = mock.method(payloadTransitionsRepository, 'transitionAll')
      try {
        assert.equal((await appView(uuid)).status, 'pending', 'neither the sweeper nor a read expires it')
        assert.equal((await pageView(uuid)).submissionInDoubt, true)
        assert.equal(moves.mock.callCount(), 0, 'a read tries no move of a payload it reads as in doubt')
      } finally {
        moves.mock.restore()
      }
      // Past its expiry, it takes no new approval, of the same blob or another; the submission stays claimed.
      for (const blob of [signed.tx_blob, signRequested(Wallet.generate(), paymentTransaction()).tx_blob]) {
        assert.equal((await approve(uuid, blob)).statusCode, 410)
      }
      assert.deepEqual(await claims(uuid), [{ tx_hash: signed.hash }])
      // Nor can the application cancel it: the ledger may have the transaction.
      const cancel = await t.inject({ method: 'DELETE', url: `/api/v1/payloads/${uuid}`, headers: { authorization: `Bearer ${apiKey}` } })
      assert.equal(cancel.statusCode, 409, cancel.body)
      assert.match(cancel.json().error, /may already be on the XRP Ledger/)

      rippled.setTransaction(signed.hash, { validated: true, ledgerIndex: 1004, transactionResult: 'tesSUCCESS', closedAtMs: createdAtMs })
      await recoverAfterTheLease()
      const view = await appView(uuid)
      assert.deepEqual([view.status, view.txHash], ['signed', signed.hash], 'the transaction the ledger applied is recorded')
    })

    it('a rejection while its submission is in doubt is refused: the ledger may have the transaction, and it does', async () => {
      const uuid = await create()
      const signed = signRequested(Wallet.generate(), paymentTransaction())
      await approveUnanswered(uuid, signed.tx_blob)
      // The page showed the 502; the user presses Reject.
      const rejection = await t.inject({ method: 'POST', url: `/api/v1/sign/${uuid}/reject`, payload: { walletAdapter: 'gemwallet' } })
      assert.equal(rejection.statusCode, 409, rejection.body)
      assert.match(rejection.json().error, /may already be on the XRP Ledger/)
      assert.equal(rejection.json().submission, 'in-doubt')
      assert.equal((await appView(uuid)).status, 'pending')

      validatedIn(signed.hash, 1004)
      await recoverAfterTheLease()
      assert.equal((await appView(uuid)).status, 'signed')
    })

    it('a rejection written but not yet committed as a claim is taken: the claim waits for it and is refused', async () => {
      // On PostgreSQL a claim's insert does not wait for a move's row lock by itself (its foreign key takes a weaker
      // one), and the move's check of the claim sees its statement's snapshot: both meet on the payload's row.
      const uuid = await create()
      const signed = signRequested(Wallet.generate(), paymentTransaction())
      const db = t.service.ctx.storage.db
      let commit!: () => void
      let written!: () => void
      const wasWritten = new Promise<void>((resolve) => {
        written = resolve
      })
      const rejecting = db.transaction().execute(async (tx) => {
        const [moved] = await payloadTransitionsRepository.transitionAll(tx, dialect, [
          { uuid, changes: { status: 'rejected', resolvedAtMs: t.clock.now(), rejectedBy: 'gemwallet' } },
        ])
        assert.equal(moved?.status, 'rejected')
        written()
        await new Promise<void>((resolve) => {
          commit = resolve
        })
      })
      await wasWritten
      const intent = intentOf(uuid, signed)
      const claiming = submissionClaimsRepository.claim(db, intent, t.clock.now() + 60_000)
      const first = await Promise.race([claiming.then(() => 'claimed'), sleep(300).then(() => 'waiting')])
      commit()
      await rejecting
      assert.equal(first, 'waiting', 'the claim waits for the rejection’s commit')
      assert.equal(await claiming, undefined, 'and is refused: the payload is rejected, nothing is submitted')
      assert.deepEqual(await claims(uuid), [])
    })

    it('the same blob sent again as the request expires keeps the claim its first submission left', async () => {
      const uuid = await create()
      const signed = signRequested(Wallet.generate(), paymentTransaction())
      await approveUnanswered(uuid, signed.tx_blob)
      // The retry passes the check before verification; the request expires before the check after its claim.
      const payloads = t.service.ctx.payloads
      const check = payloads.assertActionable.bind(payloads)
      let checks = 0
      const expiring = mock.method(payloads, 'assertActionable', async (id: string) => {
        checks++
        if (checks === 2) t.clock.advance((DEFAULT_EXPIRES_IN_SECONDS + 1) * 1000)
        return check(id)
      })
      try {
        assert.equal((await approve(uuid, signed.tx_blob)).statusCode, 410)
      } finally {
        expiring.mock.restore()
      }
      assert.deepEqual(await claims(uuid), [{ tx_hash: signed.hash }], 'the first submission may be on the ledger')
    })

    it('a request whose submission the ledger can never apply expires once the claim is released', async () => {
      const uuid = await create()
      const signed = signRequested(Wallet.generate(), paymentTransaction())
      await approveUnanswered(uuid, signed.tx_blob)
      t.clock.advance((DEFAULT_EXPIRES_IN_SECONDS + 1) * 1000)
      await t.service.ctx.payloads.expireOverdue()
      assert.equal((await appView(uuid)).status, 'pending')
      rippled.setValidatedLedgerIndex(WALLET_FIELDS.LastLedgerSequence + SETTLED_LEDGERS)
      try {
        await recoverAfterTheLease()
      } finally {
        rippled.setValidatedLedgerIndex(1000)
      }
      assert.deepEqual(await claims(uuid), [])
      assert.equal((await pageView(uuid)).submissionInDoubt, undefined, 'released: no longer in doubt')
      await t.service.ctx.payloads.expireOverdue()
      assert.equal((await appView(uuid)).status, 'expired')
    })

    // A Ticket is the request's to choose (a wallet may not add one); a Sequence, the wallet's.
    for (const [slot, requested, added, unused, used] of [
      ['Sequence', {}, { Sequence: 7 }, { sequence: 7 }, { sequence: 8 }],
      ['Ticket', { Sequence: 0, TicketSequence: 5 }, {}, { sequence: 9, tickets: [5] }, { sequence: 9, tickets: [] }],
    ] as const) {
      it(`a transaction without LastLedgerSequence stays claimed while it can be applied, and is released once its ${slot} is used`, async () => {
        const wallet = Wallet.generate()
        const transaction = { ...paymentTransaction(), ...requested }
        const signed = wallet.sign({ Account: wallet.classicAddress, Fee: '12', ...added, ...transaction } as Parameters<Wallet['sign']>[0])
        const uuid = await create(transaction)
        await approveUnanswered(uuid, signed.tx_blob)
        rippled.setAccount(wallet.classicAddress, unused)
        // Queued by the node, or waiting for a fee it will accept: an hour on, it can still be applied.
        for (let look = 0; look < 60; look++) await recoverAfterTheLease()
        assert.equal((await appView(uuid)).status, 'pending')
        assert.deepEqual(await claims(uuid), [{ tx_hash: signed.hash }], 'held: the ledger may still apply it')

        // Another transaction of the account takes its place in ledger 990.
        rippled.setAccount(wallet.classicAddress, used, { fromLedger: 990 })
        await recoverAfterTheLease()
        assert.deepEqual(await claims(uuid), [], 'another transaction took its place: it can never be applied')
        assert.equal((await appView(uuid)).status, 'expired', 'its time passed while it was in doubt')
      })
    }

    it('a transaction without LastLedgerSequence whose own ledger has just validated, unwritten, keeps its claim: the user cannot pay twice', async () => {
      const { uuid, signed, wallet } = await unansweredWithoutLastLedger(7, 7)
      await recoverAfterTheLease()
      // The ledger applies it in 1001: the account's Sequence moves on there, and rippled lists 1001 as validated before
      // its transactions reach its database (tx still answers from its cache: not validated).
      await atValidatedLedger(1001, async () => {
        rippled.setAccount(wallet.classicAddress, { sequence: 8 }, { fromLedger: 1001 })
        rippled.setTransaction(signed.hash, { validated: false, ledgerIndex: 0, transactionResult: 'tesSUCCESS' })
        await recoverAfterTheLease()
        assert.deepEqual(await claims(uuid), [{ tx_hash: signed.hash }], 'held: the Sequence was used by this very transaction')
        assert.equal((await approve(uuid, signRequested(Wallet.generate(), paymentTransaction()).tx_blob)).statusCode, 409)

        validatedIn(signed.hash, 1001)
        await recoverAfterTheLease()
        assert.equal((await appView(uuid)).status, 'signed')
      })
    })

    it('a transaction without LastLedgerSequence applied while no instance looked, on a node that lacks its ledger, keeps its claim: the user cannot pay twice', async () => {
      const { uuid, signed, wallet } = await unansweredWithoutLastLedger(7, 7)
      // The ledger applied it in 1001. By the first look, the node has restarted and holds the ledgers from 1060 only:
      // its database does not have the transaction, and the account's Sequence is used.
      rippled.setAccount(wallet.classicAddress, { sequence: 8 }, { fromLedger: 1001 })
      await atValidatedLedger(1100, async () => {
        rippled.setHistoryStart(1060)
        await recoverAfterTheLease()
        assert.deepEqual(await claims(uuid), [{ tx_hash: signed.hash }], 'held: ledger 1001 may hold it, and does')
        assert.equal((await approve(uuid, signRequested(Wallet.generate(), paymentTransaction()).tx_blob)).statusCode, 409)

        // A node with the history answers.
        rippled.setHistoryStart(1)
        rippled.setTransaction(signed.hash, { validated: false, ledgerIndex: 0, transactionResult: 'tesSUCCESS', unwrittenIn: 1001 })
        await recoverAfterTheLease()
        assert.deepEqual(await claims(uuid), [])
        assert.equal((await appView(uuid)).status, 'signed', 'ledger 1001 lists it, though the node’s database does not have it yet')
      })
    })

    it('a claim whose transaction the wallet also submitted signed with another key, applied that way, is signed: the user cannot pay twice', async () => {
      // The wallet sent its own copy of the very payment, signed with the account's regular key, and the ledger applied
      // that one in 1001. This submission's blob (another hash) never will be: the payment was made all the same.
      const { uuid, signed, wallet } = await unansweredWithoutLastLedger(7, 7)
      const decoded = decode(signed.tx_blob) as Parameters<Wallet['sign']>[0]
      const copy = Wallet.generate().sign({ ...decoded, SigningPubKey: undefined, TxnSignature: undefined })
      rippled.setAccount(wallet.classicAddress, { sequence: 8 }, { fromLedger: 1001 })
      rippled.setTransaction(copy.hash, { validated: true, ledgerIndex: 1001, transactionResult: 'tesSUCCESS', txBlob: copy.tx_blob })
      await atValidatedLedger(1100, async () => {
        await recoverAfterTheLease()
      })
      assert.deepEqual(await claims(uuid), [], 'resolved, not released')
      const view = await appView(uuid)
      assert.deepEqual([view.status, view.txHash], ['signed', signed.hash])
      assert.equal((await approve(uuid, signRequested(Wallet.generate(), paymentTransaction()).tx_blob)).statusCode, 409)

      await atValidatedLedger(1100, () => t.service.ctx.follower.followDue().then(() => undefined))
      const { submission } = await appView(uuid)
      assert.deepEqual([submission.outcome, submission.txHash, submission.ledgerIndex], ['succeeded', copy.hash, 1001])
    })

    it('a claim whose copy on the ledger counts for another request is released: one payment resolves one request', async () => {
      // The payer paid request A with X; signed the very payment again (another proof: tfFullyCanonicalSig added) for
      // B, whose answer never came. The ledger applied X, in ledger 1010.
      const payer = Wallet.generate()
      rippled.setAccount(payer.classicAddress, { sequence: WALLET_FIELDS.Sequence })
      const first = await create()
      const paid = signRequested(payer, paymentTransaction())
      assert.equal((await approve(first, paid.tx_blob)).statusCode, 200)
      const second = await create()
      await approveUnanswered(second, signRequested(payer, paymentTransaction(), { Flags: 0x80000000 }).tx_blob)
      rippled.setAccount(payer.classicAddress, { sequence: WALLET_FIELDS.Sequence }, { fromLedger: 1 })
      rippled.setAccount(payer.classicAddress, { sequence: WALLET_FIELDS.Sequence + 1 }, { fromLedger: 1010 })
      validatedIn(paid.hash, 1010)
      await atValidatedLedger(WALLET_FIELDS.LastLedgerSequence + 300, () => recoverAfterTheLease())
      assert.deepEqual(await claims(second), [], 'released')
      assert.equal((await appView(second)).status, 'pending')
    })

    it('a transaction without LastLedgerSequence whose Sequence went to another transaction before the request existed is released', async () => {
      const { uuid, wallet } = await unansweredWithoutLastLedger(7, 7)
      // Sequence 7 was used in ledger 900, which closed an hour before this request: the blob can never be applied.
      rippled.setAccount(wallet.classicAddress, { sequence: 8 }, { fromLedger: 900 })
      const now = t.clock.now()
      rippled.setLedgerCloseTimes((ledgerIndex) => now - (1000 - ledgerIndex) * 36_000)
      try {
        await atValidatedLedger(1000, async () => {
          rippled.setHistoryStart(950)
          await recoverAfterTheLease()
        })
      } finally {
        rippled.setLedgerCloseTimes(undefined)
      }
      assert.deepEqual(await claims(uuid), [], 'ledger 950, the oldest held, closed half an hour before the request: nothing older is its')
    })

    it('a blob the node lost (a restart empties its queue) is sent again while the ledger can apply it, and is signed once validated', async () => {
      // Without LastLedgerSequence, on an idle account: nothing but the ledger applying it would end the doubt.
      const { uuid, signed, sent } = await unansweredWithoutLastLedger(7, 7)
      const before = sent()
      await recoverAfterTheLease()
      await recoverAfterTheLease()
      assert.equal(sent(), before + 2, 'each look sends it again')
      assert.deepEqual(await claims(uuid), [{ tx_hash: signed.hash }])

      // The node applies what it was sent again.
      validatedIn(signed.hash, 1004)
      await recoverAfterTheLease()
      assert.equal(sent(), before + 2, 'not once a validated ledger holds it')
      const view = await appView(uuid)
      assert.deepEqual([view.status, view.txHash], ['signed', signed.hash])
      assert.deepEqual(await claims(uuid), [])
    })

    it('a blob is not sent again once its request has expired: it is only looked at', async () => {
      const { uuid, signed, wallet, sent } = await unansweredWithoutLastLedger(7, 7)
      const before = sent()
      // Half an hour on, the node is back: a payment sent now would land long after the request ended.
      t.clock.advance(30 * 60_000)
      await recoverAfterTheLease()
      assert.equal(sent(), before, 'past its expiry: not sent')
      assert.deepEqual(await claims(uuid), [{ tx_hash: signed.hash }], 'still looked at: the first submission may yet apply')
      assert.equal((await appView(uuid)).status, 'pending')
      rippled.setAccount(wallet.classicAddress, { sequence: 8 }, { fromLedger: 990 })
      await recoverAfterTheLease()
      assert.deepEqual(await claims(uuid), [])
    })

    it('a blob past its LastLedgerSequence is not sent again', async () => {
      // The account's Sequence went to a transaction three ledgers before LastLedgerSequence: this one, or another.
      const { uuid, signed, wallet } = await unansweredWithSequence(WALLET_FIELDS.Sequence)
      const usedIn = WALLET_FIELDS.LastLedgerSequence - 3
      rippled.setAccount(wallet.classicAddress, { sequence: WALLET_FIELDS.Sequence + 1 }, { fromLedger: usedIn })
      const before = rippled.submitted.length
      await atValidatedLedger(WALLET_FIELDS.LastLedgerSequence + 10, async () => {
        rippled.setHistoryStart(WALLET_FIELDS.LastLedgerSequence + 5)
        await recoverAfterTheLease()
      })
      assert.equal(rippled.submitted.length, before, 'the ledger can no longer apply it')
      assert.deepEqual(await claims(uuid), [{ tx_hash: signed.hash }], 'held until a node with the history answers')
      await atValidatedLedger(WALLET_FIELDS.LastLedgerSequence + 10, recoverAfterTheLease)
      assert.deepEqual(await claims(uuid), [])
      assert.equal(rippled.submitted.length, before)
    })

    // A signer could pin a request with a blob no queue can hold, which nothing on the ledger would ever settle; one a
    // queue can hold may wait there as long as the fees stay high.
    for (const [pin, sequence, accountSequence, released] of [
      ['its account never exists', 7, undefined, true],
      ['its Sequence far ahead of its account’s', 4_000_000_000, 7, true],
      ['(a queue could hold it: its account’s next Sequence)', 7, 7, false],
    ] as const) {
      it(`a transaction without LastLedgerSequence, ${pin}: ${released ? 'released' : 'still held'} an hour after its request expired`, async () => {
        const { uuid, signed } = await unansweredWithoutLastLedger(sequence, accountSequence)
        const expiresAtMs = t.clock.now() + DEFAULT_EXPIRES_IN_SECONDS * 1000
        while (t.clock.now() < expiresAtMs + 59 * 60_000) await recoverAfterTheLease()
        assert.deepEqual(await claims(uuid), [{ tx_hash: signed.hash }], 'held while a node could still retry it')
        t.clock.advance(2 * 60_000)
        await recoverAfterTheLease()
        assert.deepEqual(await claims(uuid), released ? [] : [{ tx_hash: signed.hash }])
        await t.service.ctx.payloads.expireOverdue()
        assert.equal((await appView(uuid)).status, released ? 'expired' : 'pending')
      })
    }

    it('a transaction validated once the request existed resolves it as signed, with its proof', async () => {
      const uuid = await create()
      const signed = signRequested(Wallet.generate(), paymentTransaction())
      await approveUnanswered(uuid, signed.tx_blob)
      // Within the margin for the ledger's rounding of its close time and the clocks' difference.
      const closedAtMs = t.clock.now() - 60_000
      rippled.setTransaction(signed.hash, { validated: true, ledgerIndex: 1004, transactionResult: 'tesSUCCESS', closedAtMs })
      await recoverAfterTheLease()
      const view = await appView(uuid)
      assert.deepEqual([view.status, view.txHash], ['signed', signed.hash])
      assert.deepEqual(await claims(uuid), [])
    })
  })

  it('two different signed blobs racing: only one is ever submitted', async () => {
    const uuid = await create()
    const blobs = [Wallet.generate(), Wallet.generate()].map((wallet) => signRequested(wallet, paymentTransaction()).tx_blob)
    const before = rippled.submitted.length
    const responses = await Promise.all(blobs.map((blob) => approve(uuid, blob)))
    assert.deepEqual(responses.map((response) => response.statusCode).sort(), [200, 409])
    assert.equal(rippled.submitted.length - before, 1)
  })

  it('gives a Ledger device the Fee, Sequence and LastLedgerSequence of an account', async () => {
    const wallet = Wallet.generate()
    rippled.setAccount(wallet.classicAddress)
    const uuid = await create()
    const response = await t.inject({ method: 'GET', url: `/api/v1/sign/${uuid}/account/${wallet.classicAddress}` })
    assert.equal(response.statusCode, 200, response.body)
    // The double's base fee is 10 drops, with xrpl.js's 20% cushion; its validated ledger is 1000.
    assert.deepEqual(response.json(), { fee: '12', sequence: 1, lastLedgerSequence: 1020 })
    const unfunded = await t.inject({ method: 'GET', url: `/api/v1/sign/${uuid}/account/${Wallet.generate().classicAddress}` })
    assert.equal(unfunded.statusCode, 422)
    assert.match(unfunded.json().details[0].message, /never been funded/)
    const garbage = await t.inject({ method: 'GET', url: `/api/v1/sign/${uuid}/account/not-an-address` })
    assert.equal(garbage.statusCode, 422)
  })

  describe('stopping the service', () => {
    it('is prompt while a submitted transaction is being followed', async () => {
      const own = await startTestService(dialect, { env: { XRPL_NODE_URL: rippled.url }, workers: true })
      const { apiKey: ownKey } = await own.createProject('pro')
      const uuid = await createPayload(own, ownKey, payloadBodies.signAndSubmit)
      const wallet = Wallet.generate()
      const signed = wallet.sign({ ...paymentTransaction(), Account: wallet.classicAddress, Fee: '12', Sequence: 3 } as Parameters<
        Wallet['sign']
      >[0])
      const response = await own.inject({
        method: 'POST',
        url: `/api/v1/sign/${uuid}/approve`,
        payload: { walletAdapter: 'gemwallet', signedTransaction: signed.tx_blob },
      })
      assert.equal(response.statusCode, 200)
      await eventually(async () => rippled.requests.some((request) => request.command === 'tx' && request.transaction === signed.hash))
      const started = performance.now()
      await own.stop()
      assert.ok(
        performance.now() - started < 3000,
        'a follow without LastLedgerSequence goes on until the ledger decides; the service stops at once',
      )
    })
  })
})

forEachDatabase('signAndSubmit without an XRPL node', (dialect) => {
  /** An instance with a node, which created payloads; t, on its database without one (the setting since removed). */
  let withNode: TestService
  let t: TestService
  let apiKey: string
  before(async () => {
    withNode = await startTestService(dialect, { env: NODE_NEVER_ASKED })
    t = await startTestService(dialect, { databaseUrl: withNode.config.databaseUrl })
    ;({ apiKey } = await t.createProject('pro'))
  })
  after(async () => {
    await t.stop()
    await withNode.stop()
  })

  it('refuses to create one with 422 naming the setting, since no approval could ever be submitted; nothing is created', async () => {
    const response = await t.inject({
      method: 'POST',
      url: '/api/v1/payloads',
      headers: bearer(apiKey),
      payload: payloadBodies.signAndSubmit,
    })
    assert.equal(response.statusCode, 422)
    assert.deepEqual(response.json().details, [
      {
        field: 'type',
        message:
          'signAndSubmit needs an XRPL node to submit to, and this service has none configured (XRPL_NODE_URL): create a sign payload and submit the signed transaction yourself',
      },
    ])
    assert.equal((await t.inject({ method: 'GET', url: '/api/v1/payloads', headers: bearer(apiKey) })).json().payloads.length, 0)
    assert.equal(
      (await t.inject({ method: 'POST', url: '/api/v1/payloads', headers: bearer(apiKey), payload: payloadBodies.sign })).statusCode,
      201,
    )
  })

  it('answers the approval of one created before with 502 saying that the service cannot submit now (never naming a setting), and the payload stays pending', async () => {
    const uuid = await createPayload(withNode, apiKey, payloadBodies.signAndSubmit)
    const response = await t.inject({
      method: 'POST',
      url: `/api/v1/sign/${uuid}/approve`,
      payload: { walletAdapter: 'gemwallet', signedTransaction: signRequested(Wallet.generate(), paymentTransaction()).tx_blob },
    })
    assert.equal(response.statusCode, 502)
    assert.match(
      response.json().error,
      /^The XRP Ledger cannot be reached from this service right now, so it cannot submit the transaction/,
    )
    assert.doesNotMatch(response.body, /XRPL_NODE_URL|configured/)
    assert.equal((await readPayload(t, apiKey, uuid)).status, 'pending')
  })
})
