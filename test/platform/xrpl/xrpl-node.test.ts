import assert from 'node:assert/strict'
import { afterEach, beforeEach, describe, it } from 'node:test'
import xrpl, { Wallet } from 'xrpl'
import {
  createXrplNode,
  isAcceptedEngineResult,
  SETTLED_LEDGERS,
  type XrplNode,
  XrplNodeUnavailableError,
} from '../../../src/platform/xrpl/xrpl-node.js'
import { type RippledDouble, startRippledDouble } from '../../support/rippled-double.js'

// xrpl is CommonJS and its ECDSA enum is not detected as a named export by Node's ESM loader.
const { ECDSA } = xrpl

const payer = Wallet.generate()
const signedPayment = payer.sign({
  TransactionType: 'Payment',
  Account: payer.classicAddress,
  Destination: Wallet.generate().classicAddress,
  Amount: '1000000',
  Fee: '12',
  Sequence: 3,
  LastLedgerSequence: 1020,
})

const REQUEST_TIMEOUT_MS = 500
/** When ledger 1000 closed, for the tests that give close times: on the second. */
const LEDGER_1000_CLOSED_AT = Date.parse('2026-11-28T12:00:00Z')

/** Resolves with how long the promise took to settle, and its rejection. */
async function timedRejection(promise: Promise<unknown>): Promise<{ error: unknown; elapsedMs: number }> {
  const started = performance.now()
  try {
    await promise
  } catch (error) {
    return { error, elapsedMs: performance.now() - started }
  }
  assert.fail('expected a rejection')
}

describe('XrplNode against a rippled double', () => {
  let rippled: RippledDouble
  let node: XrplNode

  beforeEach(async () => {
    rippled = await startRippledDouble()
    node = createXrplNode(rippled.url, { requestTimeoutMs: REQUEST_TIMEOUT_MS })
  })
  afterEach(async () => {
    await node.close()
    await rippled.close()
  })
  /** The payment is in ledger `ledgerIndex`, whose transactions the node has not written to its database yet. */
  const inLedgerUnwritten = (ledgerIndex: number) =>
    rippled.setTransaction(signedPayment.hash, {
      validated: false,
      ledgerIndex: 0,
      transactionResult: 'tesSUCCESS',
      txBlob: signedPayment.tx_blob,
      unwrittenIn: ledgerIndex,
    })

  /**
   * What a look says of the payment in ledger `ledgerIndex`: found in its list, with the result of its metadata, and
   * the delivered amount that `tx` would fill in (rippled writes DeliveredAmount only where less than Amount arrived).
   */
  const listedIn = (ledgerIndex: number, closedAtMs: number | null = null) => ({
    state: 'validated',
    txHash: signedPayment.hash,
    transactionResult: 'tesSUCCESS',
    ledgerIndex,
    deliveredAmount: '1000000',
    closedAtMs,
  })

  describe('submit', () => {
    it('submits the blob and reports tesSUCCESS as accepted', async () => {
      const result = await node.submit(signedPayment.tx_blob)
      assert.deepEqual(result, {
        engineResult: 'tesSUCCESS',
        engineResultMessage: 'The transaction was applied. Only final in a validated ledger.',
        accepted: true,
        kept: false,
        validatedLedgerIndex: 1000,
      })
      assert.deepEqual(rippled.submitted, [signedPayment.tx_blob])
    })

    it('counts terQUEUED as accepted', async () => {
      rippled.setSubmitResult('terQUEUED')
      const result = await node.submit(signedPayment.tx_blob)
      assert.equal(result.engineResult, 'terQUEUED')
      assert.equal(result.accepted, true)
    })

    it('does not accept temMALFORMED or tefPAST_SEQ, which can never apply, and passes the reason on', async () => {
      for (const engineResult of ['temMALFORMED', 'tefPAST_SEQ', 'tefMAX_LEDGER']) {
        rippled.setSubmitResult(engineResult)
        const result = await node.submit(signedPayment.tx_blob)
        assert.equal(result.engineResult, engineResult)
        assert.equal(result.accepted, false)
        assert.equal(result.kept, false)
        assert.ok(result.engineResultMessage.length > 0)
      }
      assert.equal(rippled.submitted.length, 3)
    })

    it('reports terPRE_SEQ, terRETRY, telINSUF_FEE_P and tefALREADY as not accepted but able to apply yet, whatever the answer’s kept says', async () => {
      for (const engineResult of ['terPRE_SEQ', 'terRETRY', 'telINSUF_FEE_P', 'tefALREADY']) {
        rippled.setSubmitResult(engineResult)
        const result = await node.submit(signedPayment.tx_blob)
        assert.deepEqual([result.engineResult, result.accepted, result.kept], [engineResult, false, true])
      }
    })

    it('reports a blob the node refuses before applying as not accepted', async () => {
      rippled.setSubmitError('invalidTransaction', 'fails local checks: Invalid signature.')
      const result = await node.submit(signedPayment.tx_blob)
      assert.equal(result.engineResult, 'invalidTransaction')
      assert.equal(result.accepted, false)
      assert.match(result.engineResultMessage, /Invalid signature/)
    })

    it('treats a node that refuses service (tooBusy) as unavailable', async () => {
      rippled.setSubmitError('tooBusy', 'The server is too busy to help you now.')
      await assert.rejects(node.submit(signedPayment.tx_blob), XrplNodeUnavailableError)
    })

    it('fails fast with XrplNodeUnavailableError when the node is down, and reconnects when it is back', async () => {
      await node.submit(signedPayment.tx_blob)
      await rippled.stop()
      const { error, elapsedMs } = await timedRejection(node.submit(signedPayment.tx_blob))
      assert.ok(error instanceof XrplNodeUnavailableError, String(error))
      assert.ok(elapsedMs < 2_000, `took ${elapsedMs} ms`)

      await rippled.start()
      assert.equal((await node.submit(signedPayment.tx_blob)).accepted, true)
      assert.equal(rippled.submitted.length, 2)
    })

    it('fails with XrplNodeUnavailableError when a connection never completes', async () => {
      await node.close()
      rippled.setUnresponsive(true)
      node = createXrplNode(rippled.url, { requestTimeoutMs: REQUEST_TIMEOUT_MS })
      const { error, elapsedMs } = await timedRejection(node.submit(signedPayment.tx_blob))
      assert.ok(error instanceof XrplNodeUnavailableError, String(error))
      assert.ok(elapsedMs < REQUEST_TIMEOUT_MS + 1_500, `took ${elapsedMs} ms`)
    })

    it('fails with XrplNodeUnavailableError when a connected node stops answering', async () => {
      await node.submit(signedPayment.tx_blob)
      rippled.setUnresponsive(true)
      const { error, elapsedMs } = await timedRejection(node.submit(signedPayment.tx_blob))
      assert.ok(error instanceof XrplNodeUnavailableError, String(error))
      assert.ok(elapsedMs >= REQUEST_TIMEOUT_MS - 50 && elapsedMs < REQUEST_TIMEOUT_MS + 1_500, `took ${elapsedMs} ms`)
    })
  })

  describe('isRegularKey', () => {
    const account = Wallet.generate()
    const regularKey = Wallet.generate(ECDSA.ed25519)

    it('is true only for the key set as the account RegularKey in the validated ledger', async () => {
      rippled.setAccount(account.classicAddress, { regularKey: regularKey.classicAddress })
      assert.equal(await node.isRegularKey(account.classicAddress, regularKey.publicKey), true)
      assert.equal(await node.isRegularKey(account.classicAddress, Wallet.generate().publicKey), false)
      const request = rippled.requests.find((sent) => sent.command === 'account_info')
      assert.equal(request?.account, account.classicAddress)
      assert.equal(request?.ledger_index, 'validated')
    })

    it('is false for an account without a RegularKey, or not found', async () => {
      rippled.setAccount(account.classicAddress)
      assert.equal(await node.isRegularKey(account.classicAddress, regularKey.publicKey), false)
      assert.equal(await node.isRegularKey(Wallet.generate().classicAddress, regularKey.publicKey), false)
    })

    it('throws XrplNodeUnavailableError when the node is down', async () => {
      await rippled.stop()
      await assert.rejects(node.isRegularKey(account.classicAddress, regularKey.publicKey), XrplNodeUnavailableError)
    })
  })

  describe('hasSignerQuorum', () => {
    const account = Wallet.generate().classicAddress
    const [first, second, third] = [Wallet.generate(), Wallet.generate(), Wallet.generate()].map((wallet) => wallet.classicAddress)

    it('checks the signers against the signer list weights and quorum', async () => {
      rippled.setAccount(account, {
        signerList: {
          quorum: 3,
          entries: [
            { account: first!, weight: 2 },
            { account: second!, weight: 1 },
            { account: third!, weight: 1 },
          ],
        },
      })
      assert.equal(await node.hasSignerQuorum(account, [first!, second!]), true)
      assert.equal(await node.hasSignerQuorum(account, [second!, third!]), false)
      assert.equal(await node.hasSignerQuorum(account, [first!, Wallet.generate().classicAddress]), false)
    })

    it('is false without a signer list or account', async () => {
      rippled.setAccount(account)
      assert.equal(await node.hasSignerQuorum(account, [first!]), false)
      assert.equal(await node.hasSignerQuorum(Wallet.generate().classicAddress, [first!]), false)
    })
  })

  describe('isMasterKeyDisabled', () => {
    const account = Wallet.generate().classicAddress

    it('reads lsfDisableMaster from the validated account root', async () => {
      rippled.setAccount(account, { disableMaster: true })
      assert.equal(await node.isMasterKeyDisabled(account), true)
      rippled.setAccount(account)
      assert.equal(await node.isMasterKeyDisabled(account), false)
      assert.equal(await node.isMasterKeyDisabled(Wallet.generate().classicAddress), false, 'an unfunded account has its master key')
    })
  })

  describe('slotSeen', () => {
    it('reads the Sequence and the Ticket in one settled ledger, SETTLED_LEDGERS behind the validated one, and names it', async () => {
      const account = Wallet.generate().classicAddress
      rippled.setValidatedLedgerIndex(2000)
      const settled = 2000 - SETTLED_LEDGERS
      assert.deepEqual(await node.slotSeen(account, { sequence: 1 }), { used: false, ledgerIndex: null }, 'no account: no ledger named')
      rippled.setAccount(account, { sequence: 7, tickets: [5] })
      assert.deepEqual(await node.slotSeen(account, { sequence: 7 }), { used: false, ledgerIndex: settled })
      assert.deepEqual(await node.slotSeen(account, { sequence: 6 }), { used: true, ledgerIndex: settled })
      assert.deepEqual(await node.slotSeen(account, { ticketSequence: 5 }), { used: false, ledgerIndex: settled })
      assert.deepEqual(
        await node.slotSeen(account, { ticketSequence: 4 }),
        { used: true, ledgerIndex: settled },
        'a Ticket below the Sequence, gone: used',
      )
      assert.deepEqual(
        await node.slotSeen(account, { ticketSequence: 9 }),
        { used: false, ledgerIndex: settled },
        'not created yet: a TicketCreate may still make it',
      )
      const reads = rippled.requests.filter((request) => request.command === 'account_info' || request.command === 'ledger_entry')
      assert.ok(reads.length >= 6)
      for (const read of reads) assert.equal(read.ledger_index, settled, `${read.command} in the settled ledger, not the validated one`)
    })
  })

  describe('transactionStatus', () => {
    const hash = signedPayment.hash

    it('is pending while the transaction is unknown or not yet validated, and the ledger has not passed LastLedgerSequence', async () => {
      assert.deepEqual(await node.transactionStatus(hash, 1020), { state: 'pending', missingLedgers: false })
      assert.deepEqual(await node.transactionStatus(hash, null), { state: 'pending', missingLedgers: false })
      rippled.setTransaction(hash, { validated: false, ledgerIndex: 0, transactionResult: 'tesSUCCESS' })
      assert.deepEqual(await node.transactionStatus(hash, 1020), { state: 'pending', missingLedgers: false }, 'in an open ledger')
    })

    it('is validated with the final result, the ledger and the delivered amount', async () => {
      const closedAtMs = Date.parse('2026-11-28T10:20:30Z')
      rippled.setTransaction(hash, {
        validated: true,
        ledgerIndex: 1003,
        transactionResult: 'tesSUCCESS',
        deliveredAmount: '990000',
        closedAtMs,
      })
      assert.deepEqual(await node.transactionStatus(hash, 1020), {
        state: 'validated',
        txHash: hash,
        transactionResult: 'tesSUCCESS',
        ledgerIndex: 1003,
        deliveredAmount: '990000',
        closedAtMs,
      })
      rippled.setTransaction(hash, { validated: true, ledgerIndex: 1004, transactionResult: 'tecPATH_DRY' })
      assert.deepEqual(
        await node.transactionStatus(hash, null),
        {
          state: 'validated',
          txHash: hash,
          transactionResult: 'tecPATH_DRY',
          ledgerIndex: 1004,
          deliveredAmount: null,
          closedAtMs: null,
        },
        'a node that gives no close time',
      )
    })

    it('is dropped once LastLedgerSequence is a settled ledger (SETTLED_LEDGERS behind the validated one) without the transaction', async () => {
      rippled.setValidatedLedgerIndex(1020)
      assert.deepEqual(
        await node.transactionStatus(hash, 1020),
        { state: 'pending', missingLedgers: false },
        'ledger 1020 just validated: its transactions may not be in the node’s database yet',
      )
      rippled.setValidatedLedgerIndex(1020 + SETTLED_LEDGERS - 1)
      assert.deepEqual(await node.transactionStatus(hash, 1020), { state: 'pending', missingLedgers: false })
      rippled.setValidatedLedgerIndex(1020 + SETTLED_LEDGERS)
      assert.deepEqual(await node.transactionStatus(hash, 1020), { state: 'dropped', validatedLedgerIndex: 1020 + SETTLED_LEDGERS })
      assert.deepEqual(
        await node.transactionStatus(hash, null),
        { state: 'pending', missingLedgers: false },
        'without LastLedgerSequence it is never dropped',
      )
    })

    it('is not dropped while the node lacks some of the 256 ledgers up to LastLedgerSequence', async () => {
      rippled.setValidatedLedgerIndex(1030)
      // Known to the node, as a blob it refused and caches is, but in no ledger.
      rippled.setTransaction(hash, { validated: false, ledgerIndex: 0, transactionResult: 'tefPAST_SEQ' })
      try {
        rippled.setHistoryStart(1020 - 255 + 1)
        assert.deepEqual(await node.transactionStatus(hash, 1020), { state: 'pending', missingLedgers: true }, 'restarted at ledger 766')
        rippled.setHistoryStart(1020 - 255)
        assert.deepEqual(await node.transactionStatus(hash, 1020), { state: 'dropped', validatedLedgerIndex: 1030 })
      } finally {
        rippled.setHistoryStart(1)
        rippled.setValidatedLedgerIndex(1000)
      }
    })

    it('throws XrplNodeUnavailableError when the node is down', async () => {
      await rippled.stop()
      await assert.rejects(node.transactionStatus(hash, 1020), XrplNodeUnavailableError)
    })
  })

  describe('transactionStatusSince (a transaction whose Sequence a settled ledger shows used)', () => {
    const blob = signedPayment.tx_blob
    const hash = signedPayment.hash
    const account = Wallet.generate().classicAddress
    /** Sequence 7 unused up to ledger `usedFrom`, used from it on. */
    const usedFrom = (ledgerIndex: number) => {
      rippled.setAccount(account, { sequence: 7 }, { fromLedger: 1 })
      rippled.setAccount(account, { sequence: 8 }, { fromLedger: ledgerIndex })
    }
    const since = (earliestLedger: number | null, notBeforeMs = 0) => ({
      account,
      slot: { sequence: 7 },
      usedBy: 1492,
      earliestLedger,
      notBeforeMs,
    })
    const ledgersRead = () => rippled.requests.filter((request) => request.command === 'ledger').map((request) => request.ledger_index)
    beforeEach(() => {
      rippled.setValidatedLedgerIndex(1500)
      rippled.requests.length = 0
    })
    afterEach(() => {
      rippled.setHistoryStart(1)
      rippled.setValidatedLedgerIndex(1000)
      rippled.setLedgerCloseTimes(undefined)
    })

    it('is validated when the node’s database holds it', async () => {
      rippled.setTransaction(hash, { validated: true, ledgerIndex: 1234, transactionResult: 'tesSUCCESS' })
      const status = await node.transactionStatusSince(blob, since(1001))
      assert.equal(status.state, 'validated')
    })

    it('is dropped when the first ledger that shows the Sequence used holds another transaction, found from the earliest that can hold it', async () => {
      usedFrom(1234)
      rippled.setTransaction(hash, { validated: false, ledgerIndex: 0, transactionResult: 'tesSUCCESS' })
      // The same payment but for one field the signer approved (its fee): another transaction.
      const other = payer.sign({ ...(xrpl.decode(blob) as xrpl.Payment), Fee: '13', SigningPubKey: undefined, TxnSignature: undefined })
      rippled.setTransaction(other.hash, { validated: true, ledgerIndex: 1234, transactionResult: 'tesSUCCESS', txBlob: other.tx_blob })
      assert.deepEqual(await node.transactionStatusSince(blob, since(1001)), { state: 'dropped', validatedLedgerIndex: 1492 })
      assert.deepEqual(ledgersRead(), [1234], 'the transactions of the ledger that used Sequence 7, and no other')
      const reads = rippled.requests.filter((request) => request.command === 'account_info').length
      assert.ok(reads <= 10, `a binary search over 491 ledgers: ${reads} reads`)
    })

    it('is validated from that ledger’s metadata when the node has not written it to its database yet', async () => {
      usedFrom(1234)
      inLedgerUnwritten(1234)
      assert.deepEqual(await node.transactionStatusSince(blob, since(1001)), listedIn(1234))
    })

    it('is validated, with the hash and result the ledger holds, when the same transaction signed with another key took the Sequence', async () => {
      usedFrom(1234)
      // The wallet submitted its own copy of the very payment, signed with the account's regular key: another hash.
      const regularKey = Wallet.generate()
      const copy = regularKey.sign({ ...(xrpl.decode(blob) as xrpl.Payment), SigningPubKey: undefined, TxnSignature: undefined })
      assert.notEqual(copy.hash, hash)
      rippled.setTransaction(copy.hash, {
        validated: false,
        ledgerIndex: 0,
        transactionResult: 'tecPATH_PARTIAL',
        deliveredAmount: '0',
        txBlob: copy.tx_blob,
        unwrittenIn: 1234,
      })
      assert.deepEqual(await node.transactionStatusSince(blob, since(1001)), {
        state: 'validated',
        txHash: copy.hash,
        signedOtherwise: xrpl.decode(copy.tx_blob),
        transactionResult: 'tecPATH_PARTIAL',
        ledgerIndex: 1234,
        deliveredAmount: '0',
        closedAtMs: null,
      })
    })

    it('decides nothing from a list of transactions cut short, that does not hash to the ledger’s transaction_hash', async () => {
      usedFrom(1234)
      // The node store misses a part of ledger 1234: rippled lists its transactions up to there, without an error.
      inLedgerUnwritten(1234)
      rippled.setTransactionListsCut(true)
      try {
        assert.deepEqual(await node.transactionStatusSince(blob, since(1001)), { state: 'pending', missingLedgers: true })
      } finally {
        rippled.setTransactionListsCut(false)
      }
      assert.deepEqual(await node.transactionStatusSince(blob, since(1001)), listedIn(1234))
      const read = rippled.requests.filter((request) => request.command === 'ledger').at(-1)
      assert.deepEqual([read?.expand, read?.binary], [true, true], 'read whole, to hash')
    })

    it('decides nothing from a ledger answered for another index than asked, though its list hashes to its own header', async () => {
      usedFrom(1234)
      inLedgerUnwritten(1234)
      // A proxy (or a defect) answers ledger 1233, whole and consistent, for ledger 1234: its empty list is not 1234's.
      rippled.beforeAnswer((request) => {
        if (request.command === 'ledger' && request.ledger_index === 1234) request.ledger_index = 1233
      })
      try {
        assert.deepEqual(await node.transactionStatusSince(blob, since(1001)), { state: 'pending', missingLedgers: true })
      } finally {
        rippled.beforeAnswer(undefined)
      }
      assert.deepEqual(await node.transactionStatusSince(blob, since(1001)), listedIn(1234))
    })

    it('decides nothing from a server that has not validated the ledgers it is asked about (behind a load-balanced address)', async () => {
      usedFrom(1234)
      // A server whose validated ledger is 1232 answers for 1233 and 1234, its closed and open ledgers, unvalidated.
      rippled.setValidatedLedgerIndex(1232)
      assert.deepEqual(await node.transactionStatusSince(blob, { ...since(1001), usedBy: 1234 }), {
        state: 'pending',
        missingLedgers: true,
      })
    })

    it('is pending, missing ledgers, when the node lacks a ledger the search reads, whatever its server_info lists', async () => {
      usedFrom(1234)
      rippled.setHistoryStart(1235)
      assert.deepEqual(await node.transactionStatusSince(blob, since(1001)), { state: 'pending', missingLedgers: true })
      assert.deepEqual(
        await node.transactionStatusSince(blob, { ...since(1001), usedBy: 1501 }),
        { state: 'pending', missingLedgers: true },
        'a node behind the one that saw the Sequence used (a load-balanced address)',
      )
      assert.deepEqual(
        await node.transactionStatusSince(blob, since(1493)),
        { state: 'pending', missingLedgers: true },
        'seen unused after the ledger that shows it used: from servers at odds, nothing is decided',
      )
    })

    it('without a ledger where it was seen unused, searches back from the settled ledger in doubling steps, then finds the first', async () => {
      usedFrom(1234)
      assert.deepEqual(await node.transactionStatusSince(blob, since(null)), { state: 'dropped', validatedLedgerIndex: 1492 })
      const reads = rippled.requests.filter((request) => request.command === 'account_info').length
      assert.ok(reads <= 20, `${reads} reads`)
      assert.equal(ledgersRead().at(-1), 1234)
      inLedgerUnwritten(1234)
      assert.deepEqual(await node.transactionStatusSince(blob, since(null)), listedIn(1234))
      rippled.setHistoryStart(1300)
      assert.deepEqual(
        await node.transactionStatusSince(blob, since(null)),
        { state: 'pending', missingLedgers: true },
        'the node lacks the ledgers back to where it was unused',
      )
    })

    it('without one, bounds the search at the ledger that created the account when a step reaches a ledger before it', async () => {
      // A new account (created in ledger 1230, its Sequence the ledger index) whose Sequence 1230 goes in ledger 1234.
      const fresh = Wallet.generate().classicAddress
      rippled.setAccount(fresh, { sequence: 1230 }, { fromLedger: 1230 })
      rippled.setAccount(fresh, { sequence: 1231 }, { fromLedger: 1234 })
      const search = { ...since(null), account: fresh, slot: { sequence: 1230 } }
      assert.deepEqual(await node.transactionStatusSince(blob, search), { state: 'dropped', validatedLedgerIndex: 1492 })
      assert.equal(ledgersRead().at(-1), 1234)
      inLedgerUnwritten(1234)
      assert.deepEqual(await node.transactionStatusSince(blob, search), listedIn(1234))
    })

    it('decides nothing for an account deleted and created again since: its earlier life may hold the transaction', async () => {
      // Sequence 7 went in ledger 1100; the account was deleted in 1400 and created again in 1450, at Sequence 1450.
      const again = Wallet.generate().classicAddress
      rippled.setAccount(again, { sequence: 7 }, { fromLedger: 1 })
      rippled.setAccount(again, { sequence: 8 }, { fromLedger: 1100 })
      rippled.deleteAccount(again, { fromLedger: 1400 })
      rippled.setAccount(again, { sequence: 1450 }, { fromLedger: 1450 })
      inLedgerUnwritten(1100)
      assert.deepEqual(await node.transactionStatusSince(blob, { ...since(null), account: again }), {
        state: 'pending',
        missingLedgers: true,
      })
    })

    it('finds the ledger that used a Ticket, not the one that created it, with or without a ledger where it was unused', async () => {
      const holder = Wallet.generate().classicAddress
      rippled.setAccount(holder, { sequence: 3 }, { fromLedger: 1 })
      rippled.setAccount(holder, { sequence: 7, tickets: [4, 5, 6] }, { fromLedger: 1200 }) // TicketCreate takes 3 to 6
      rippled.setAccount(holder, { sequence: 7, tickets: [4, 6] }, { fromLedger: 1300 }) // Ticket 5 used
      inLedgerUnwritten(1300)
      assert.deepEqual(await node.slotSeen(holder, { ticketSequence: 5 }), { used: true, ledgerIndex: 1492 })
      for (const earliestLedger of [1001, null]) {
        const search = { ...since(earliestLedger), account: holder, slot: { ticketSequence: 5 } }
        assert.deepEqual(await node.transactionStatusSince(blob, search), listedIn(1300), `from ${earliestLedger}`)
        assert.equal(ledgersRead().at(-1), 1300)
      }
    })

    it('without one, is dropped when the Sequence was used in a ledger that closed before notBeforeMs, and only then', async () => {
      usedFrom(900)
      // Ledger n closed 4 seconds after ledger n - 1.
      rippled.setLedgerCloseTimes((ledgerIndex) => LEDGER_1000_CLOSED_AT + (ledgerIndex - 1000) * 4_000)
      const notBeforeMs = LEDGER_1000_CLOSED_AT + (1100 - 1000) * 4_000
      assert.deepEqual(await node.transactionStatusSince(blob, since(null, notBeforeMs)), { state: 'dropped', validatedLedgerIndex: 1492 })
      assert.deepEqual(
        ledgersRead(),
        [1491, 1490, 1488, 1484, 1476, 1460, 1428, 1364, 1236, 980],
        'each step back reads its ledger’s close time, and the search stops at the first that closed before the request existed',
      )
      inLedgerUnwritten(900)
      assert.deepEqual(
        await node.transactionStatusSince(blob, since(null, 0)),
        listedIn(900, LEDGER_1000_CLOSED_AT + (900 - 1000) * 4_000),
        'with no such bound, the search goes back to ledger 900, which holds it',
      )
    })
  })

  describe('transactionStatusUsed (a transaction the node refused with tefPAST_SEQ)', () => {
    const blob = signedPayment.tx_blob
    const account = Wallet.generate().classicAddress
    const used = { account, slot: { sequence: 7 }, notBeforeMs: 0 }
    beforeEach(() => rippled.setAccount(account, { sequence: 7 }, { fromLedger: 1 }))

    it('is pending while the validated ledger shows the Sequence unused (taken in the open ledger only), or lacks the account', async () => {
      assert.deepEqual(await node.transactionStatusUsed(blob, used), { state: 'pending', missingLedgers: false })
      assert.deepEqual(await node.transactionStatusUsed(blob, { ...used, account: Wallet.generate().classicAddress }), {
        state: 'pending',
        missingLedgers: false,
      })
    })

    it('searches from the validated ledger, not a settled one: a ledger just validated lists what used the Sequence', async () => {
      rippled.setAccount(account, { sequence: 8 }, { fromLedger: 999 })
      inLedgerUnwritten(999)
      assert.deepEqual(await node.transactionStatusUsed(blob, used), listedIn(999))
      rippled.setTransaction(signedPayment.hash, { validated: false, ledgerIndex: 0, transactionResult: 'tefPAST_SEQ' })
      assert.deepEqual(await node.transactionStatusUsed(blob, used), { state: 'dropped', validatedLedgerIndex: 1000 })
    })
  })

  describe('transactionStatusPast (a transaction past its LastLedgerSequence, decided from its Sequence)', () => {
    const blob = signedPayment.tx_blob
    const hash = signedPayment.hash
    const account = Wallet.generate().classicAddress
    const past = { account, slot: { sequence: 7 }, lastLedgerSequence: 1020, notBeforeMs: 0 }
    /** What the lookup by hash says of a transaction past LastLedgerSequence on a node without the history. */
    const byHash = { state: 'pending', missingLedgers: true } as const
    afterEach(() => {
      rippled.setHistoryStart(1)
      rippled.setValidatedLedgerIndex(1000)
    })

    it('leaves it to the lookup by hash before LastLedgerSequence is settled, and while the account is not in the settled ledger', async () => {
      rippled.setAccount(account, { sequence: 7 })
      rippled.setValidatedLedgerIndex(1100)
      const notPast = { state: 'pending', missingLedgers: false } as const
      assert.deepEqual(await node.transactionStatusPast(blob, past, notPast), notPast)
      const dropped = { state: 'dropped', validatedLedgerIndex: 1100 } as const
      assert.deepEqual(await node.transactionStatusPast(blob, { ...past, account: Wallet.generate().classicAddress }, dropped), dropped)
    })

    it('is dropped when the Sequence is unused in a settled ledger at or past LastLedgerSequence, whatever history the node keeps', async () => {
      rippled.setAccount(account, { sequence: 7 })
      rippled.setValidatedLedgerIndex(1020 + SETTLED_LEDGERS)
      rippled.setHistoryStart(1020)
      assert.deepEqual(await node.transactionStatusPast(blob, past, byHash), { state: 'dropped', validatedLedgerIndex: 1020 })
      rippled.setValidatedLedgerIndex(1020 + SETTLED_LEDGERS - 1)
      rippled.setHistoryStart(1)
      assert.deepEqual(
        await node.transactionStatusPast(blob, past, byHash),
        { state: 'pending', missingLedgers: true },
        'a settled ledger before LastLedgerSequence (a server behind) says nothing',
      )
    })

    it('searches for the ledger that used the Sequence when it is used', async () => {
      rippled.setAccount(account, { sequence: 7 }, { fromLedger: 1 })
      rippled.setAccount(account, { sequence: 8 }, { fromLedger: 1017 })
      rippled.setValidatedLedgerIndex(1100)
      inLedgerUnwritten(1017)
      assert.deepEqual(await node.transactionStatusPast(blob, past, byHash), listedIn(1017))
      rippled.setTransaction(hash, { validated: false, ledgerIndex: 0, transactionResult: 'tefPAST_SEQ' })
      assert.deepEqual(await node.transactionStatusPast(blob, past, byHash), { state: 'dropped', validatedLedgerIndex: 1020 })
    })

    it('searches from LastLedgerSequence, not the settled ledger: a Sequence used only after it went to another transaction', async () => {
      const reads = () => rippled.requests.filter((request) => request.command === 'account_info').length
      rippled.setAccount(account, { sequence: 7 }, { fromLedger: 1 })
      rippled.setAccount(account, { sequence: 8 }, { fromLedger: 3000 })
      // An hour after LastLedgerSequence (some 900 ledgers): the recovery of an instance that was down.
      rippled.setValidatedLedgerIndex(1020 + 900)
      rippled.requests.length = 0
      assert.deepEqual(await node.transactionStatusPast(blob, past, byHash), { state: 'dropped', validatedLedgerIndex: 1912 })
      assert.equal(reads(), 1, 'unused at the settled ledger')
      rippled.setValidatedLedgerIndex(3000 + 900)
      rippled.requests.length = 0
      assert.deepEqual(await node.transactionStatusPast(blob, past, byHash), { state: 'dropped', validatedLedgerIndex: 3892 })
      assert.deepEqual(
        [reads(), rippled.requests.filter((request) => request.command === 'ledger').length],
        [2, 0],
        'used at the settled ledger, unused at LastLedgerSequence: no search',
      )
      rippled.setAccount(account, { sequence: 8 }, { fromLedger: 1017 })
      inLedgerUnwritten(1017)
      rippled.requests.length = 0
      assert.deepEqual(await node.transactionStatusPast(blob, past, byHash), listedIn(1017))
      assert.ok(reads() <= 10, `searched back from ledger 1020, not 3892: ${reads()} reads`)
    })
  })
})

describe('isAcceptedEngineResult', () => {
  it('accepts tesSUCCESS, terQUEUED and tec results, and nothing else', () => {
    for (const code of ['tesSUCCESS', 'terQUEUED', 'tecUNFUNDED_PAYMENT']) assert.equal(isAcceptedEngineResult(code), true, code)
    for (const code of ['terPRE_SEQ', 'terRETRY', 'temMALFORMED', 'tefPAST_SEQ', 'telINSUF_FEE_P', 'invalidTransaction'])
      assert.equal(isAcceptedEngineResult(code), false, code)
  })
})
