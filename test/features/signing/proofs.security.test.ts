// Proofs used out of their context, tried as an attacker would: each test is an attack on the real service, with real
// xrpl keys and signatures, and the rippled protocol double for what the ledger says.
import assert from 'node:assert/strict'
import { after, afterEach, before, describe, it } from 'node:test'
import { decode, encode } from 'ripple-binary-codec'
import xrpl, { Wallet } from 'xrpl'
import { buildConnectTransaction } from '../../../src/features/signing/verify/connect-challenge.js'
import { MAX_BLOB_FIELDS, MAX_SIGNERS } from '../../../src/features/signing/verify/signed-blob.js'
import { type RunningService, startService } from '../../../src/main.js'
import { createLogger } from '../../../src/platform/logger.js'
import { describePostgres, forEachDatabase } from '../../support/databases.js'
import { paymentTransaction } from '../../support/fixtures.js'
import { createPayload, readPayload } from '../../support/payloads.js'
import { type RippledDouble, startRippledDouble } from '../../support/rippled-double.js'
import { bearer, startTestService, type TestService } from '../../support/service.js'
import { signRequested, signText, WALLET_FIELDS } from '../../support/wallet-signing.js'

// xrpl is CommonJS and its ECDSA enum is not detected as a named export by Node's ESM loader.
const { ECDSA } = xrpl

type Injector = Pick<TestService, 'inject'>

const approve = (service: Injector, uuid: string, body: object) =>
  service.inject({ method: 'POST', url: `/api/v1/sign/${uuid}/approve`, payload: body })
const challengeOf = async (t: TestService, uuid: string) =>
  (await t.inject({ method: 'GET', url: `/api/v1/sign/${uuid}` })).json().challenge as string
/** The connect transaction with one hex digit more on its memo type: the codec drops an odd last digit. */
const withOddMemoType = (transaction: Record<string, unknown>) => {
  const [{ Memo }] = transaction.Memos as [{ Memo: Record<string, string> }]
  return { ...transaction, Memos: [{ Memo: { ...Memo, MemoType: `${Memo.MemoType}A` } }] }
}
const detailFields = (response: { json(): { details?: Array<{ field: string }> } }) => (response.json().details ?? []).map((d) => d.field)

forEachDatabase('proofs out of their context', (dialect) => {
  let t: TestService
  let rippled: RippledDouble
  /** The attacker's project, and the project whose users the attacker wants to be. */
  let attackerKey: string
  let bankKey: string

  before(async () => {
    rippled = await startRippledDouble()
    t = await startTestService(dialect, { env: { XRPL_NODE_URL: rippled.url } })
    ;({ apiKey: attackerKey } = await t.createProject('pro', 'Attacker app'))
    ;({ apiKey: bankKey } = await t.createProject('pro', 'Bank'))
  })
  after(async () => {
    await t.stop()
    await rippled.close()
  })

  const createAs = (apiKey: string, body: object) =>
    t.inject({ method: 'POST', url: '/api/v1/payloads', headers: bearer(apiKey), payload: body })

  describe('cross-project sign-in takeover', () => {
    it("a signMessage whose message is another project's connect challenge is refused at creation", async () => {
      // The bank's sign-in request: its challenge is public to anyone with the uuid.
      const bankConnect = await createPayload(t, bankKey, { type: 'connect' })
      const challenge = await challengeOf(t, bankConnect)
      // The attacker asks the victim to sign that challenge as a "message" on the attacker's own page...
      const lure = await createAs(attackerKey, { type: 'signMessage', message: challenge })
      assert.equal(lure.statusCode, 422, 'the lure must not exist')
      assert.deepEqual(detailFields(lure), ['message'])
      assert.match(lure.json().details[0].message, /connect challenge/)
      // ...and would have replayed the victim's signature to the bank: the bank's sign-in stays untouched.
      assert.equal((await readPayload(t, bankKey, bankConnect)).status, 'pending')
    })

    it('a message that only begins like a challenge is refused too, whatever its case or line ending', async () => {
      for (const message of [
        'countersign.test wants you to sign in with your XRP Ledger account.\r\nanything',
        'EVIL.EXAMPLE WANTS YOU TO SIGN IN WITH YOUR XRP LEDGER ACCOUNT.',
      ]) {
        const response = await createAs(attackerKey, { type: 'signMessage', message })
        assert.equal(response.statusCode, 422, message)
      }
      assert.equal((await createAs(attackerKey, { type: 'signMessage', message: 'Sign in to Attacker app' })).statusCode, 201)
    })

    it("a sign or signAndSubmit requesting another project's connect transaction is refused at creation", async () => {
      const victim = Wallet.generate()
      const bankConnect = await createPayload(t, bankKey, { type: 'connect' })
      const connectTransaction = buildConnectTransaction(await challengeOf(t, bankConnect), victim.classicAddress)
      const { Account: _account, ...withoutAccount } = connectTransaction
      for (const type of ['sign', 'signAndSubmit']) {
        for (const transaction of [connectTransaction, withoutAccount]) {
          const lure = await createAs(attackerKey, { type, transaction })
          assert.equal(lure.statusCode, 422, `${type} ${JSON.stringify(transaction)}`)
          assert.deepEqual(detailFields(lure), ['transaction.Memos'])
        }
      }
      // Had the victim signed it on the attacker's page, the bank would have taken it as the victim's sign-in.
      const signed = victim.sign(connectTransaction as Parameters<Wallet['sign']>[0])
      assert.equal((await readPayload(t, bankKey, bankConnect)).status, 'pending')
      assert.equal(rippled.submitted.includes(signed.tx_blob), false)
    })

    it('the connect transaction with its memo type one hex digit longer, which the codec signs as the memo type itself, is refused at creation', async () => {
      const victim = Wallet.generate()
      const bankConnect = await createPayload(t, bankKey, { type: 'connect' })
      const connectTransaction = buildConnectTransaction(await challengeOf(t, bankConnect), victim.classicAddress)
      const lure = await createAs(attackerKey, { type: 'sign', transaction: withOddMemoType(connectTransaction) })
      assert.equal(lure.statusCode, 422, lure.body)
      assert.deepEqual(detailFields(lure), ['transaction.Memos.0.Memo.MemoType'])
    })

    it('such a lure created before odd-length hex was refused is refused when signed, and its blob never signs anyone in', async () => {
      const victim = Wallet.generate()
      const bankConnect = await createPayload(t, bankKey, { type: 'connect' })
      const connectTransaction = buildConnectTransaction(await challengeOf(t, bankConnect), victim.classicAddress)
      const lure = await createPayload(t, attackerKey, { type: 'sign', transaction: paymentTransaction() })
      await t.service.ctx.storage.db
        .updateTable('payloads')
        .set({ transaction_json: JSON.stringify(withOddMemoType(connectTransaction)) })
        .where('uuid', '=', lure)
        .execute()
      // The victim's wallet signs what the codec makes of the request: the memo type exactly countersign/connect.
      const signed = victim.sign(connectTransaction as Parameters<Wallet['sign']>[0])
      const response = await approve(t, lure, { walletAdapter: 'gemwallet', signedTransaction: signed.tx_blob })
      assert.equal(response.statusCode, 422, response.body)
      assert.deepEqual(detailFields(response), ['transaction.Memos'])
      const read = await readPayload(t, attackerKey, lure)
      assert.equal(read.status, 'pending')
      assert.equal(read.txBlob, null, 'the attacker never gets the blob to take to the bank')
      assert.equal((await readPayload(t, bankKey, bankConnect)).status, 'pending')
    })

    it('a lure created before the rule existed is refused when signed, and never reaches the other project', async () => {
      const bankConnect = await createPayload(t, bankKey, { type: 'connect' })
      const challenge = await challengeOf(t, bankConnect)
      const lure = await createPayload(t, attackerKey, { type: 'signMessage', message: 'harmless' })
      await t.service.ctx.storage.db.updateTable('payloads').set({ message: challenge }).where('uuid', '=', lure).execute()
      const victim = Wallet.generate()
      const response = await approve(t, lure, {
        walletAdapter: 'gemwallet',
        publicKey: victim.publicKey,
        signature: signText(victim, challenge),
      })
      assert.equal(response.statusCode, 422)
      assert.equal((await readPayload(t, attackerKey, lure)).status, 'pending')
    })
  })

  describe('a proof resolves one payload, ever', () => {
    it('a signed blob that resolved one project’s payload is 409 on another’s, and is not submitted again', async () => {
      const victim = Wallet.generate()
      const shop = await createPayload(t, attackerKey, { type: 'sign', transaction: paymentTransaction() })
      const other = await createPayload(t, bankKey, { type: 'sign', transaction: paymentTransaction() })
      const submitting = await createPayload(t, bankKey, { type: 'signAndSubmit', transaction: paymentTransaction() })
      const signed = signRequested(victim, paymentTransaction())
      assert.equal((await approve(t, shop, { walletAdapter: 'gemwallet', signedTransaction: signed.tx_blob })).statusCode, 200)
      for (const uuid of [other, submitting]) {
        const replay = await approve(t, uuid, { walletAdapter: 'gemwallet', signedTransaction: signed.tx_blob })
        assert.equal(replay.statusCode, 409, replay.body)
        assert.match(replay.json().error, /already used by another request/)
        assert.equal((await readPayload(t, bankKey, uuid)).status, 'pending')
      }
      assert.equal(rippled.submitted.includes(signed.tx_blob), false, 'a replayed blob is never submitted')
    })

    it('the same transaction with other signatures (another quorum of its multisigners) is the same proof', async () => {
      const account = Wallet.generate()
      const [first, second, third] = [Wallet.generate(), Wallet.generate(), Wallet.generate()]
      rippled.setAccount(account.classicAddress, {
        signerList: { quorum: 2, entries: [first!, second!, third!].map((signer) => ({ account: signer.classicAddress, weight: 1 })) },
      })
      const requested = { ...paymentTransaction(), Account: account.classicAddress }
      const multisigned = (signers: Wallet[]) =>
        xrpl.multisign(
          signers.map((signer) => signer.sign({ ...requested, ...WALLET_FIELDS, Fee: '36', SigningPubKey: '' } as never, true).tx_blob),
        )
      const one = await createPayload(t, attackerKey, { type: 'sign', transaction: requested })
      const two = await createPayload(t, bankKey, { type: 'sign', transaction: requested })
      assert.equal((await approve(t, one, { walletAdapter: 'ledger', signedTransaction: multisigned([first!, second!]) })).statusCode, 200)
      const otherBlob = multisigned([first!, third!])
      const replay = await approve(t, two, { walletAdapter: 'ledger', signedTransaction: otherBlob })
      assert.equal(replay.statusCode, 409, 'another blob, the same transaction: the ledger would apply it once')
    })

    it('one signMessage signature resolves one payload: posted to a second project’s request it is 409', async () => {
      const victim = Wallet.generate()
      const message = 'Log in to Example'
      const shop = await createPayload(t, attackerKey, { type: 'signMessage', message })
      const other = await createPayload(t, bankKey, { type: 'signMessage', message })
      const proof = { walletAdapter: 'crossmark', publicKey: victim.publicKey, signature: signText(victim, message) }
      assert.equal((await approve(t, shop, proof)).statusCode, 200)
      const replay = await approve(t, other, proof)
      assert.equal(replay.statusCode, 409)
      assert.match(replay.json().error, /already used by another request/)
      assert.equal((await readPayload(t, bankKey, other)).status, 'pending')
    })
  })

  describe('CPU exhaustion without a key', () => {
    /** A blob multisigned by `count` real keys (each signature valid in form, made over another transaction). */
    const manySigners = (count: number, requested: Record<string, unknown>) => {
      const signers = Array.from({ length: count }, () => Wallet.generate(ECDSA.secp256k1))
      const elsewhere = { ...paymentTransaction('1'), Account: Wallet.generate().classicAddress, ...WALLET_FIELDS, SigningPubKey: '' }
      const entries = signers.map((signer) => {
        const signature = (decode(signer.sign(elsewhere as never, true).tx_blob) as { Signers: Array<{ Signer: object }> }).Signers[0]
        return signature as { Signer: object }
      })
      return encode({ ...requested, ...WALLET_FIELDS, Fee: '3000', SigningPubKey: '', Signers: entries } as never)
    }

    // What these refusals cost against an honest approval is measured, not timed here (docs/performance.md, "Hostile
    // approvals"): a timed assertion flakes on a shared machine. The messages below come only from the checks made before decoding.
    it('a blob with 240 signers is refused before any signature is checked', async () => {
      const account = Wallet.generate()
      const requested = { ...paymentTransaction(), Account: account.classicAddress }
      const target = await createPayload(t, bankKey, { type: 'sign', transaction: requested })
      const response = await approve(t, target, { walletAdapter: 'ledger', signedTransaction: manySigners(240, requested) })
      assert.equal(response.statusCode, 422)
      assert.deepEqual(detailFields(response), ['signedTransaction'])
      assert.match(response.json().details[0].message, new RegExp(`more than ${MAX_SIGNERS} Signers`))
    })

    it('a blob stuffed with thousands of empty memos is refused before it is decoded', async () => {
      const wallet = Wallet.generate()
      const target = await createPayload(t, bankKey, { type: 'sign', transaction: paymentTransaction() })
      const stuffed = encode({
        ...paymentTransaction(),
        Account: wallet.classicAddress,
        ...WALLET_FIELDS,
        Memos: Array(10_000).fill({ Memo: {} }),
      } as never)
      const response = await approve(t, target, { walletAdapter: 'ledger', signedTransaction: stuffed })
      assert.equal(response.statusCode, 422)
      assert.match(response.json().details[0].message, new RegExp(`more than ${MAX_BLOB_FIELDS} fields`))
      const honestBlob = signRequested(wallet, paymentTransaction()).tx_blob
      assert.equal((await approve(t, target, { walletAdapter: 'ledger', signedTransaction: honestBlob })).statusCode, 200)
    })

    it('32 signers over a transaction that differs from the request: refused on the fields, no signature checked', async () => {
      const account = Wallet.generate()
      const requested = { ...paymentTransaction(), Account: account.classicAddress }
      const blob = manySigners(MAX_SIGNERS, { ...requested, Amount: '999999999' })
      const target = await createPayload(t, bankKey, { type: 'sign', transaction: requested })
      const response = await approve(t, target, { walletAdapter: 'ledger', signedTransaction: blob })
      assert.equal(response.statusCode, 422)
      assert.deepEqual(detailFields(response), ['signedTransaction.Amount'])
    })

    it('32 signers whose signatures fail: the first failure ends it, and it is the only detail', async () => {
      const account = Wallet.generate()
      const requested = { ...paymentTransaction(), Account: account.classicAddress }
      const target = await createPayload(t, bankKey, { type: 'sign', transaction: requested })
      const response = await approve(t, target, { walletAdapter: 'ledger', signedTransaction: manySigners(MAX_SIGNERS, requested) })
      assert.equal(response.statusCode, 422)
      assert.deepEqual(detailFields(response), ['signedTransaction.Signers[0].TxnSignature'])
    })
  })

  describe('a disabled master key signs for nobody', () => {
    const disabled = Wallet.generate()
    const regularKey = Wallet.generate()
    before(() => rippled.setAccount(disabled.classicAddress, { disableMaster: true, regularKey: regularKey.classicAddress }))

    const refusedFor = (response: { statusCode: number; json(): { details?: Array<{ field: string; message: string }> } }) => {
      assert.equal(response.statusCode, 422)
      const detail = response.json().details?.[0]
      assert.match(detail?.message ?? '', /master key of .* has disabled \(lsfDisableMaster\)/)
      return detail?.field
    }

    it('a transaction signed with it is 422, and one signed by the RegularKey still counts', async () => {
      for (const type of ['sign', 'signAndSubmit']) {
        const uuid = await createPayload(t, bankKey, { type, transaction: paymentTransaction() })
        const byMaster = signRequested(disabled, paymentTransaction())
        assert.equal(
          refusedFor(await approve(t, uuid, { walletAdapter: 'gemwallet', signedTransaction: byMaster.tx_blob })),
          'signedTransaction.SigningPubKey',
        )
        assert.equal(rippled.submitted.includes(byMaster.tx_blob), false)
        assert.equal((await readPayload(t, bankKey, uuid)).status, 'pending')
        const byRegularKey = signRequested(regularKey, paymentTransaction(), {
          Account: disabled.classicAddress,
          Sequence: type === 'sign' ? 8 : 9,
        })
        const accepted = await approve(t, uuid, { walletAdapter: 'gemwallet', signedTransaction: byRegularKey.tx_blob })
        assert.equal(accepted.statusCode, 200, accepted.body)
        assert.equal(accepted.json().signerAddress, disabled.classicAddress)
      }
    })

    it('a signMessage signature by it is 422', async () => {
      const uuid = await createPayload(t, bankKey, { type: 'signMessage', message: 'I own this account' })
      const response = await approve(t, uuid, {
        walletAdapter: 'gemwallet',
        publicKey: disabled.publicKey,
        signature: signText(disabled, 'I own this account'),
      })
      assert.equal(refusedFor(response), 'publicKey')
    })

    it('a connect by signature or by the connect transaction is 422', async () => {
      const bySignature = await createPayload(t, bankKey, { type: 'connect' })
      const challenge = await challengeOf(t, bySignature)
      const response = await approve(t, bySignature, {
        walletAdapter: 'crossmark',
        publicKey: disabled.publicKey,
        signature: signText(disabled, challenge),
      })
      assert.equal(refusedFor(response), 'publicKey')

      const byTransaction = await createPayload(t, bankKey, { type: 'connect' })
      const signed = disabled.sign(buildConnectTransaction(await challengeOf(t, byTransaction), disabled.classicAddress) as never)
      assert.equal(
        refusedFor(await approve(t, byTransaction, { walletAdapter: 'ledger', signedTransaction: signed.tx_blob })),
        'signedTransaction.SigningPubKey',
      )
      assert.equal((await readPayload(t, bankKey, byTransaction)).status, 'pending')
    })

    it('a multisignature by a signer whose master key is disabled is 422', async () => {
      const account = Wallet.generate()
      const signers = [Wallet.generate(), Wallet.generate()]
      rippled.setAccount(account.classicAddress, {
        signerList: { quorum: 2, entries: signers.map((signer) => ({ account: signer.classicAddress, weight: 1 })) },
      })
      rippled.setAccount(signers[1]!.classicAddress, { disableMaster: true })
      const requested = { ...paymentTransaction(), Account: account.classicAddress }
      const blob = xrpl.multisign(
        signers.map((signer) => signer.sign({ ...requested, ...WALLET_FIELDS, Fee: '36', SigningPubKey: '' } as never, true).tx_blob),
      )
      const uuid = await createPayload(t, bankKey, { type: 'sign', transaction: requested })
      const field = refusedFor(await approve(t, uuid, { walletAdapter: 'ledger', signedTransaction: blob }))
      assert.match(field ?? '', /^signedTransaction\.Signers\[\d\]\.SigningPubKey$/)
    })
  })

  describe('options.signers', () => {
    const alice = Wallet.generate()
    const bob = Wallet.generate()
    const mallory = Wallet.generate()

    it('refuses an invalid, repeated or excessive list at creation', async () => {
      const cases: Array<[unknown, string]> = [
        [[], 'options.signers'],
        [['not-an-address'], 'options.signers[0]'],
        [[alice.classicAddress, alice.classicAddress], 'options.signers[1]'],
        [Array.from({ length: 9 }, () => Wallet.generate().classicAddress), 'options.signers'],
      ]
      for (const [signers, field] of cases) {
        const response = await createAs(bankKey, { type: 'connect', options: { signers } })
        assert.equal(response.statusCode, 422, JSON.stringify(signers))
        assert.deepEqual(detailFields(response), [field])
      }
      const other = await createAs(bankKey, {
        type: 'sign',
        transaction: { ...paymentTransaction(), Account: mallory.classicAddress },
        options: { signers: [alice.classicAddress] },
      })
      assert.equal(other.statusCode, 422, 'a requested Account outside the list could never sign')
    })

    it('another account is 422 naming the allowed ones; an allowed one resolves; the page is told which to use', async () => {
      const signers = [alice.classicAddress, bob.classicAddress]
      const uuid = await createPayload(t, bankKey, { type: 'connect', options: { signers } })
      const view = await t.inject({ method: 'GET', url: `/api/v1/sign/${uuid}` })
      assert.deepEqual(view.json().signers, signers)
      const challenge = view.json().challenge as string
      const refused = await approve(t, uuid, {
        walletAdapter: 'gemwallet',
        publicKey: mallory.publicKey,
        signature: signText(mallory, challenge),
      })
      assert.equal(refused.statusCode, 422)
      assert.deepEqual(detailFields(refused), ['signerAddress'])
      assert.match(refused.json().details[0].message, new RegExp(`${alice.classicAddress} or ${bob.classicAddress}`))
      const accepted = await approve(t, uuid, { walletAdapter: 'gemwallet', publicKey: bob.publicKey, signature: signText(bob, challenge) })
      assert.equal(accepted.statusCode, 200, accepted.body)
      assert.equal(accepted.json().signerAddress, bob.classicAddress)
    })

    it('holds for transactions and messages too', async () => {
      const sign = await createPayload(t, bankKey, {
        type: 'sign',
        transaction: paymentTransaction(),
        options: { signers: [alice.classicAddress] },
      })
      assert.equal(
        (await approve(t, sign, { walletAdapter: 'gemwallet', signedTransaction: signRequested(mallory, paymentTransaction()).tx_blob }))
          .statusCode,
        422,
      )
      assert.equal(
        (await approve(t, sign, { walletAdapter: 'gemwallet', signedTransaction: signRequested(alice, paymentTransaction()).tx_blob }))
          .statusCode,
        200,
      )
      const message = await createPayload(t, bankKey, {
        type: 'signMessage',
        message: 'Hello',
        options: { signers: [alice.classicAddress] },
      })
      const refused = await approve(t, message, {
        walletAdapter: 'gemwallet',
        publicKey: mallory.publicKey,
        signature: signText(mallory, 'Hello'),
      })
      assert.equal(refused.statusCode, 422)
    })
  })

  describe('a transaction signed for another network', () => {
    afterEach(() => rippled.setNetworkId(1))

    it("is 422 before it is submitted: a NetworkID the node's network refuses could keep the request in doubt past its expiry", async () => {
      for (const type of ['sign', 'signAndSubmit']) {
        const uuid = await createPayload(t, bankKey, { type, transaction: paymentTransaction() })
        // No LastLedgerSequence, and the id of another network: rippled answers such a submission with a tel code.
        const { LastLedgerSequence: _none, ...fields } = WALLET_FIELDS
        const wallet = Wallet.generate()
        const foreign = wallet.sign({
          ...paymentTransaction(),
          ...fields,
          Account: wallet.classicAddress,
          NetworkID: 21_337,
        } as Parameters<Wallet['sign']>[0])
        const response = await approve(t, uuid, { walletAdapter: 'gemwallet', signedTransaction: foreign.tx_blob })
        assert.equal(response.statusCode, 422, response.body)
        assert.deepEqual(detailFields(response), ['signedTransaction.NetworkID'])
        assert.match(response.json().details[0].message, /must be absent on testnet \(network 1\)/)
        assert.equal(rippled.submitted.includes(foreign.tx_blob), false, 'never submitted')
        assert.equal((await readPayload(t, bankKey, uuid)).status, 'pending')
      }
    })

    it("a request that names another network's NetworkID is refused at creation: no wallet may change it, so none could sign it", async () => {
      for (const networkId of [21_338, 1]) {
        const response = await createAs(bankKey, { type: 'sign', transaction: { ...paymentTransaction(), NetworkID: networkId } })
        assert.equal(response.statusCode, 422, response.body)
        assert.deepEqual(detailFields(response), ['transaction.NetworkID'])
        assert.match(
          response.json().details[0].message,
          /must be absent on testnet \(network 1\).*no transaction signed with it could apply here/,
        )
      }
    })

    it('on a network above 1024, the NetworkID must be its id, as the node gives it', async () => {
      rippled.setNetworkId(21_338)
      const other = await startTestService(dialect, { env: { XRPL_NODE_URL: rippled.url, XRPL_NETWORK: 'xahau' } })
      try {
        const { apiKey } = await other.createProject('pro')
        const wallet = Wallet.generate()
        const uuid = await createPayload(other, apiKey, { type: 'sign', transaction: paymentTransaction() })
        for (const networkId of [undefined, 21_337]) {
          const signed = signRequested(wallet, paymentTransaction(), networkId === undefined ? {} : { NetworkID: networkId })
          const response = await approve(other, uuid, { walletAdapter: 'gemwallet', signedTransaction: signed.tx_blob })
          assert.equal(response.statusCode, 422, `${networkId}: ${response.body}`)
          assert.match(response.json().details[0].message, /must be 21338, the id of xahau/)
        }
        const right = signRequested(wallet, paymentTransaction(), { NetworkID: 21_338 })
        const accepted = await approve(other, uuid, { walletAdapter: 'gemwallet', signedTransaction: right.tx_blob })
        assert.equal(accepted.statusCode, 200, accepted.body)
      } finally {
        await other.stop()
      }
    })
  })

  describe('walletAdapter is a label', () => {
    it('xaman is refused from the browser: Xaman results come from Xaman itself', async () => {
      const wallet = Wallet.generate()
      const uuid = await createPayload(t, bankKey, { type: 'sign', transaction: paymentTransaction() })
      const approval = await approve(t, uuid, {
        walletAdapter: 'xaman',
        signedTransaction: signRequested(wallet, paymentTransaction()).tx_blob,
      })
      assert.equal(approval.statusCode, 422)
      assert.deepEqual(detailFields(approval), ['walletAdapter'])
      const rejection = await t.inject({ method: 'POST', url: `/api/v1/sign/${uuid}/reject`, payload: { walletAdapter: 'xaman' } })
      assert.equal(rejection.statusCode, 422)
      assert.equal((await readPayload(t, bankKey, uuid)).status, 'pending')
    })
  })
})

forEachDatabase('what is not checked without an XRPL node', (dialect) => {
  let t: TestService
  let apiKey: string
  before(async () => {
    t = await startTestService(dialect)
    ;({ apiKey } = await t.createProject('pro'))
  })
  after(() => t.stop())

  it('a master key is taken as enabled: a signMessage signature by it resolves (docs/signing.md says so)', async () => {
    const wallet = Wallet.generate()
    const uuid = await createPayload(t, apiKey, { type: 'signMessage', message: 'Hello' })
    const response = await approve(t, uuid, {
      walletAdapter: 'gemwallet',
      publicKey: wallet.publicKey,
      signature: signText(wallet, 'Hello'),
    })
    assert.equal(response.statusCode, 200)
  })
})

describePostgres('a proof resolves one payload across instances', () => {
  let t: TestService
  let second: RunningService
  let apiKey: string

  before(async () => {
    t = await startTestService('postgres')
    second = await startService(t.config, { listen: false, workers: false, logger: createLogger('silent'), clock: t.clock })
    ;({ apiKey } = await t.createProject('pro'))
  })
  after(async () => {
    await second.stop()
    await t.stop()
  })

  it('one blob posted at once to two payloads on two instances resolves exactly one of them, every time', async () => {
    for (let round = 0; round < 10; round++) {
      const victim = Wallet.generate()
      const first = await createPayload(t, apiKey, { type: 'sign', transaction: paymentTransaction() })
      const other = await createPayload(t, apiKey, { type: 'sign', transaction: paymentTransaction() })
      const signedTransaction = signRequested(victim, paymentTransaction()).tx_blob
      const answers = await Promise.all([
        approve(t, first, { walletAdapter: 'gemwallet', signedTransaction }),
        approve({ inject: (request) => second.app.inject(request) }, other, { walletAdapter: 'gemwallet', signedTransaction }),
      ])
      assert.deepEqual(answers.map((answer) => answer.statusCode).sort(), [200, 409], `round ${round}`)
      const statuses = [(await readPayload(t, apiKey, first)).status, (await readPayload(t, apiKey, other)).status].sort()
      assert.deepEqual(statuses, ['pending', 'signed'])
    }
  })
})
