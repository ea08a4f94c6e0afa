import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { decode, encode, encodeForSigning } from 'ripple-binary-codec'
import keypairs from 'ripple-keypairs'
import xrpl, { multisign, Wallet } from 'xrpl'
import { BODY_LIMIT_BYTES } from '../../../src/app.js'
import { SIGN_REQUESTS_PER_MINUTE } from '../../../src/features/signing/routes.js'
import { buildConnectTransaction } from '../../../src/features/signing/verify/connect-challenge.js'
import { forEachDatabase } from '../../support/databases.js'
import { paymentTransaction } from '../../support/fixtures.js'
import { createPayload, readPayload } from '../../support/payloads.js'
import { type RippledDouble, startRippledDouble } from '../../support/rippled-double.js'
import { bearer, startTestService, type TestService } from '../../support/service.js'
import { signRequested, signText, WALLET_FIELDS } from '../../support/wallet-signing.js'

// xrpl is CommonJS and its ECDSA enum is not detected as a named export by Node's ESM loader.
const { ECDSA } = xrpl

const KEY_TYPES = [
  ['secp256k1', ECDSA.secp256k1],
  ['Ed25519', ECDSA.ed25519],
] as const

const TF_PARTIAL_PAYMENT = 0x00020000

forEachDatabase('wallet-facing API', (dialect) => {
  let t: TestService
  let rippled: RippledDouble
  let apiKey: string

  before(async () => {
    rippled = await startRippledDouble()
    t = await startTestService(dialect, { env: { XRPL_NODE_URL: rippled.url } })
    ;({ apiKey } = await t.createProject('pro', 'Example Shop'))
  })
  after(async () => {
    await t.stop()
    await rippled.close()
  })

  const create = (body: object) => createPayload(t, apiKey, body)
  const signView = (uuid: string) => t.inject({ method: 'GET', url: `/api/v1/sign/${uuid}` })
  const approve = (uuid: string, body: unknown) =>
    t.inject({ method: 'POST', url: `/api/v1/sign/${uuid}/approve`, payload: body as object })
  const reject = (uuid: string, body: object = {}) => t.inject({ method: 'POST', url: `/api/v1/sign/${uuid}/reject`, payload: body })
  const appView = (uuid: string) => readPayload(t, apiKey, uuid)
  const statusOf = async (uuid: string) => (await appView(uuid)).status
  const challengeOf = async (uuid: string) => (await signView(uuid)).json().challenge as string
  const detailFields = (response: { json(): { details?: Array<{ field: string }> } }) => (response.json().details ?? []).map((d) => d.field)

  describe('reading a request', () => {
    it('shows the page everything it needs, and nothing of the outcome while pending', async () => {
      const uuid = await create({
        type: 'sign',
        transaction: paymentTransaction('2500000'),
        options: { customInstructions: 'Order #42', returnUrl: 'https://shop.example/done' },
      })
      const response = await signView(uuid)
      assert.equal(response.statusCode, 200)
      assert.equal(response.headers['cache-control'], 'no-store')
      assert.equal(response.headers.date, new Date(t.clock.now()).toUTCString())
      const view = response.json()
      assert.deepEqual(view, {
        uuid,
        type: 'sign',
        status: 'pending',
        expiresAt: new Date(t.clock.now() + 300_000).toISOString(),
        network: 'testnet',
        project: { name: 'Example Shop' },
        transaction: paymentTransaction('2500000'),
        customInstructions: 'Order #42',
        wallets: { xaman: false, developer: true },
      })
    })

    it('shows the message of signMessage and the challenge of connect, which names the payload', async () => {
      const message = await signView(await create({ type: 'signMessage', message: 'Log in to Example Shop' }))
      assert.equal(message.json().message, 'Log in to Example Shop')
      const uuid = await create({ type: 'connect' })
      const challenge = await challengeOf(uuid)
      assert.match(challenge, new RegExp(`Payload ID: ${uuid}`))
      assert.match(challenge, /URI: http:\/\/countersign\.test\/sign\//)
    })

    it('answers 404 for an unknown uuid and for something that is not a uuid', async () => {
      for (const uuid of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
        for (const response of [await signView(uuid), await reject(uuid), await reject(uuid, { walletAdapter: 'gemwallet' })]) {
          assert.equal(response.statusCode, 404)
          assert.deepEqual(response.json(), { error: 'Payload not found' })
        }
      }
    })

    it('is public: no API key is asked for, and an API key is not needed', async () => {
      const uuid = await create({ type: 'connect' })
      const response = await t.inject({ method: 'GET', url: `/api/v1/sign/${uuid}`, headers: { authorization: 'Bearer wrong' } })
      assert.equal(response.statusCode, 200)
    })
  })

  for (const [keyName, algorithm] of KEY_TYPES) {
    describe(`approving with a ${keyName} key`, () => {
      const wallet = Wallet.generate(algorithm)

      it('sign: verifies the blob and records signer, hash and blob', async () => {
        const uuid = await create({ type: 'sign', transaction: paymentTransaction() })
        const signed = signRequested(wallet, paymentTransaction())
        const response = await approve(uuid, { walletAdapter: 'gemwallet', signedTransaction: signed.tx_blob.toLowerCase() })
        assert.equal(response.statusCode, 200, response.body)
        const resolution = response.json()
        assert.deepEqual(resolution, {
          uuid,
          status: 'signed',
          signerAddress: wallet.classicAddress,
          txHash: signed.hash,
          walletAdapter: 'gemwallet',
          resolvedAt: new Date(t.clock.now()).toISOString(),
        })
        const view = await appView(uuid)
        assert.equal(view.status, 'signed')
        assert.equal(view.signerAddress, wallet.classicAddress)
        assert.equal(view.txHash, signed.hash)
        assert.equal(view.txBlob, signed.tx_blob.toUpperCase())
        assert.equal(view.walletAdapter, 'gemwallet')
        assert.equal(view.resolvedAt, resolution.resolvedAt)
        assert.deepEqual(rippled.submitted, [], 'sign never submits')
      })

      it('signMessage: verifies the signature over the message and derives the address', async () => {
        const message = 'Ich stimme zu: 100 € — ✓'
        const uuid = await create({ type: 'signMessage', message })
        const response = await approve(uuid, {
          walletAdapter: 'crossmark',
          publicKey: wallet.publicKey,
          signature: signText(wallet, message),
        })
        assert.equal(response.statusCode, 200, response.body)
        assert.equal(response.json().signerAddress, wallet.classicAddress)
        assert.equal('txHash' in response.json(), false)
        const view = await appView(uuid)
        assert.equal(view.signerAddress, wallet.classicAddress)
        assert.equal(view.publicKey, wallet.publicKey.toUpperCase())
        assert.equal(view.signature, signText(wallet, message).toUpperCase())
        assert.equal(view.walletAdapter, 'crossmark')
        assert.equal(view.txHash, null)
      })

      it('connect: verifies the signature over the challenge', async () => {
        const uuid = await create({ type: 'connect' })
        const challenge = await challengeOf(uuid)
        const response = await approve(uuid, {
          walletAdapter: 'developer',
          publicKey: wallet.publicKey,
          signature: signText(wallet, challenge),
        })
        assert.equal(response.statusCode, 200, response.body)
        const view = await appView(uuid)
        assert.equal(view.status, 'signed')
        assert.equal(view.signerAddress, wallet.classicAddress)
        assert.equal(view.publicKey, wallet.publicKey.toUpperCase())
        assert.equal(view.walletAdapter, 'developer')
        // The application checks the sign-in on its own side, from the view alone (api.md, "Checking a connect").
        assert.equal(view.challenge, challenge)
        assert.equal(view.txBlob, null, 'the text itself was signed')
        assert.ok(view.challenge.includes(`Payload ID: ${uuid}`))
        assert.ok(keypairs.verify(Buffer.from(view.challenge, 'utf8').toString('hex'), view.signature, view.publicKey))
        assert.equal(keypairs.deriveAddress(view.publicKey), view.signerAddress)
      })
    })
  }

  it('connect from a Ledger: the signed connect transaction, which can never be applied, carries the challenge', async () => {
    const wallet = Wallet.generate()
    const uuid = await create({ type: 'connect' })
    const signed = wallet.sign(buildConnectTransaction(await challengeOf(uuid), wallet.classicAddress) as Parameters<Wallet['sign']>[0])
    const response = await approve(uuid, { walletAdapter: 'ledger', signedTransaction: signed.tx_blob })
    assert.equal(response.statusCode, 200, response.body)
    const view = await appView(uuid)
    assert.equal(view.signerAddress, wallet.classicAddress)
    assert.equal(view.walletAdapter, 'ledger')
    assert.equal(view.publicKey, wallet.publicKey.toUpperCase())
    assert.equal(view.signature, (decode(signed.tx_blob) as { TxnSignature: string }).TxnSignature)
    // The application's own check: the record is the account's, its signature verifies, and its memo is this challenge's hash.
    const record = decode(view.txBlob) as {
      Account: string
      SigningPubKey: string
      TxnSignature: string
      Memos: { Memo: { MemoData: string } }[]
    }
    assert.equal(record.Account, view.signerAddress)
    assert.equal(record.SigningPubKey, view.publicKey)
    const { TxnSignature, ...unsigned } = record
    assert.ok(keypairs.verify(encodeForSigning(unsigned), TxnSignature, record.SigningPubKey))
    assert.equal(record.Memos[0]?.Memo.MemoData, createHash('sha256').update(view.challenge, 'utf8').digest('hex').toUpperCase())
  })

  describe('multisigned transactions', () => {
    const account = Wallet.generate()
    const signers = [Wallet.generate(), Wallet.generate(ECDSA.ed25519)]
    const requested = { ...paymentTransaction(), Account: account.classicAddress }
    const multisigned = () =>
      multisign(
        signers.map((signer) => signer.sign({ ...requested, ...WALLET_FIELDS, Fee: '36', SigningPubKey: '' } as never, true).tx_blob),
      )

    it('accepts signers that reach the quorum of the signer list in the ledger', async () => {
      rippled.setAccount(account.classicAddress, {
        signerList: { quorum: 2, entries: signers.map((signer) => ({ account: signer.classicAddress, weight: 1 })) },
      })
      const uuid = await create({ type: 'sign', transaction: requested })
      const response = await approve(uuid, { walletAdapter: 'crossmark', signedTransaction: multisigned() })
      assert.equal(response.statusCode, 200, response.body)
      assert.equal(response.json().signerAddress, account.classicAddress)
    })

    it('refuses signers short of the quorum, and the payload stays pending', async () => {
      rippled.setAccount(account.classicAddress, {
        signerList: { quorum: 3, entries: signers.map((signer) => ({ account: signer.classicAddress, weight: 1 })) },
      })
      const uuid = await create({ type: 'sign', transaction: requested })
      const response = await approve(uuid, { walletAdapter: 'crossmark', signedTransaction: multisigned() })
      assert.equal(response.statusCode, 422)
      assert.deepEqual(detailFields(response), ['signedTransaction.Signers'])
      assert.equal(await statusOf(uuid), 'pending')
    })
  })

  describe('what does not verify is 422, changes nothing, and leaves the payload pending', () => {
    const wallet = Wallet.generate()
    const cases: Array<[string, () => string, string]> = [
      ['a changed Amount', () => signRequested(wallet, paymentTransaction('999000000')).tx_blob, 'signedTransaction.Amount'],
      ['an added SendMax', () => signRequested(wallet, paymentTransaction(), { SendMax: '2000000' }).tx_blob, 'signedTransaction.SendMax'],
      [
        'the partial-payment flag',
        () => signRequested(wallet, paymentTransaction(), { Flags: TF_PARTIAL_PAYMENT }).tx_blob,
        'signedTransaction.Flags',
      ],
      [
        'a changed Destination',
        () => signRequested(wallet, { ...paymentTransaction(), Destination: Wallet.generate().classicAddress }).tx_blob,
        'signedTransaction.Destination',
      ],
      [
        'an Amount changed after signing',
        () => {
          const transaction = decode(signRequested(wallet, paymentTransaction()).tx_blob)
          return encode({ ...transaction, Amount: '1000001' })
        },
        'signedTransaction.Amount',
      ],
    ]
    for (const [name, blob, field] of cases) {
      it(`refuses ${name}`, async () => {
        const uuid = await create({ type: 'sign', transaction: paymentTransaction() })
        const response = await approve(uuid, { walletAdapter: 'gemwallet', signedTransaction: blob() })
        assert.equal(response.statusCode, 422)
        assert.ok(detailFields(response).includes(field), `details name ${field}: ${response.body}`)
        const view = await appView(uuid)
        assert.equal(view.status, 'pending')
        assert.equal(view.txBlob, null)
        assert.equal(view.walletAdapter, null)
      })
    }

    it('refuses a transaction signed after the fact by a key that is not the account’s (no RegularKey in the ledger)', async () => {
      const owner = Wallet.generate()
      const other = Wallet.generate()
      const requested = { ...paymentTransaction(), Account: owner.classicAddress }
      const uuid = await create({ type: 'sign', transaction: requested })
      const response = await approve(uuid, { walletAdapter: 'gemwallet', signedTransaction: signRequested(other, requested).tx_blob })
      assert.equal(response.statusCode, 422)
      assert.deepEqual(detailFields(response), ['signedTransaction.SigningPubKey'])
      assert.equal(await statusOf(uuid), 'pending')
    })

    it('refuses a message signature made with another key than the one sent', async () => {
      const uuid = await create({ type: 'signMessage', message: 'hello' })
      const response = await approve(uuid, {
        walletAdapter: 'gemwallet',
        publicKey: Wallet.generate().publicKey,
        signature: signText(wallet, 'hello'),
      })
      assert.equal(response.statusCode, 422)
      assert.deepEqual(detailFields(response), ['signature'])
      assert.equal(await statusOf(uuid), 'pending')
    })

    it('refuses a signature over another message', async () => {
      const uuid = await create({ type: 'signMessage', message: 'pay 1 XRP' })
      const response = await approve(uuid, {
        walletAdapter: 'gemwallet',
        publicKey: wallet.publicKey,
        signature: signText(wallet, 'pay 100 XRP'),
      })
      assert.equal(response.statusCode, 422)
      assert.equal(await statusOf(uuid), 'pending')
    })

    it('refuses a connect signature reused for another payload', async () => {
      const first = await create({ type: 'connect' })
      const signature = signText(wallet, await challengeOf(first))
      assert.equal((await approve(first, { walletAdapter: 'crossmark', publicKey: wallet.publicKey, signature })).statusCode, 200)
      const second = await create({ type: 'connect' })
      const replay = await approve(second, { walletAdapter: 'crossmark', publicKey: wallet.publicKey, signature })
      assert.equal(replay.statusCode, 422)
      assert.deepEqual(detailFields(replay), ['signature'])
      assert.equal(await statusOf(second), 'pending')
    })

    it('refuses a Ledger connect transaction made for another payload’s challenge', async () => {
      const first = await create({ type: 'connect' })
      const second = await create({ type: 'connect' })
      const signed = wallet.sign(buildConnectTransaction(await challengeOf(first), wallet.classicAddress) as Parameters<Wallet['sign']>[0])
      const response = await approve(second, { walletAdapter: 'ledger', signedTransaction: signed.tx_blob })
      assert.equal(response.statusCode, 422)
      assert.deepEqual(detailFields(response), ['signedTransaction.Memos'])
    })

    it('refuses the fields of another kind of approval', async () => {
      const uuid = await create({ type: 'sign', transaction: paymentTransaction() })
      const response = await approve(uuid, { walletAdapter: 'gemwallet', publicKey: wallet.publicKey, signature: '00' })
      assert.equal(response.statusCode, 422)
      assert.deepEqual(detailFields(response).sort(), ['publicKey', 'signature', 'signedTransaction'])
    })
  })

  it('refuses a message containing NUL when the payload is created', async () => {
    const response = await t.inject({
      method: 'POST',
      url: '/api/v1/payloads',
      headers: bearer(apiKey),
      payload: { type: 'signMessage', message: 'hello\u0000world' },
    })
    assert.equal(response.statusCode, 422)
    assert.deepEqual(detailFields(response), ['message'])
  })

  describe('hostile and broken input is 4xx, never 5xx, and changes nothing', () => {
    const wallet = Wallet.generate()
    const blob = () => signRequested(wallet, paymentTransaction()).tx_blob
    const bodies: Array<[string, () => unknown, 'sign' | 'signMessage']> = [
      ['non-hex', () => ({ walletAdapter: 'gemwallet', signedTransaction: 'zz'.repeat(40) }), 'sign'],
      ['odd-length hex', () => ({ walletAdapter: 'gemwallet', signedTransaction: blob().slice(0, -1) }), 'sign'],
      ['a truncated blob', () => ({ walletAdapter: 'gemwallet', signedTransaction: blob().slice(0, 60) }), 'sign'],
      ['trailing bytes', () => ({ walletAdapter: 'gemwallet', signedTransaction: `${blob()}00` }), 'sign'],
      ['an empty blob', () => ({ walletAdapter: 'gemwallet', signedTransaction: '' }), 'sign'],
      ['a number for the blob', () => ({ walletAdapter: 'gemwallet', signedTransaction: 12 }), 'sign'],
      ['an unknown wallet', () => ({ walletAdapter: 'metamask', signedTransaction: blob() }), 'sign'],
      ['an unknown field', () => ({ walletAdapter: 'gemwallet', signedTransaction: blob(), admin: true }), 'sign'],
      ['no body fields', () => ({}), 'sign'],
      ['an array body', () => [1, 2], 'sign'],
      ['a string body', () => 'approve', 'sign'],
      [
        'an uncompressed secp256k1 key',
        () => ({ walletAdapter: 'gemwallet', publicKey: `04${'11'.repeat(64)}`, signature: '00' }),
        'signMessage',
      ],
      [
        'a key of an unknown type',
        () => ({ walletAdapter: 'gemwallet', publicKey: `05${'11'.repeat(32)}`, signature: '3045' }),
        'signMessage',
      ],
      [
        'a signature that is not DER',
        () => ({ walletAdapter: 'gemwallet', publicKey: wallet.publicKey, signature: 'ff'.repeat(72) }),
        'signMessage',
      ],
      [
        'an oversized signature',
        () => ({ walletAdapter: 'gemwallet', publicKey: wallet.publicKey, signature: 'ab'.repeat(1000) }),
        'signMessage',
      ],
      ['a transaction blob for a message', () => ({ walletAdapter: 'gemwallet', signedTransaction: blob() }), 'signMessage'],
    ]
    for (const [name, body, type] of bodies) {
      it(`${type}: ${name}`, async () => {
        const uuid = await create(type === 'sign' ? { type, transaction: paymentTransaction() } : { type, message: 'hi' })
        const response = await approve(uuid, body())
        assert.ok(response.statusCode >= 400 && response.statusCode < 500, `${response.statusCode} ${response.body}`)
        assert.equal(typeof response.json().error, 'string')
        assert.equal(await statusOf(uuid), 'pending')
      })
    }

    it('a body that is not JSON is 400, and one above the body limit is 413', async () => {
      const uuid = await create({ type: 'sign', transaction: paymentTransaction() })
      const notJson = await t.inject({
        method: 'POST',
        url: `/api/v1/sign/${uuid}/approve`,
        headers: { 'content-type': 'application/json' },
        payload: '{"walletAdapter":',
      })
      assert.equal(notJson.statusCode, 400)
      const oversize = await approve(uuid, { walletAdapter: 'gemwallet', signedTransaction: 'AB'.repeat(BODY_LIMIT_BYTES) })
      assert.equal(oversize.statusCode, 413)
      const formEncoded = await t.inject({
        method: 'POST',
        url: `/api/v1/sign/${uuid}/approve`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'walletAdapter=gemwallet',
      })
      assert.equal(formEncoded.statusCode, 415)
      assert.equal(await statusOf(uuid), 'pending')
    })
  })

  describe('rejecting', () => {
    it('records the wallet, and gives the return URL with its placeholders filled', async () => {
      const uuid = await create({
        type: 'signMessage',
        message: 'hi',
        options: { returnUrl: 'https://shop.example/back?id={uuid}&tx={txHash}' },
      })
      const response = await reject(uuid, { walletAdapter: 'crossmark' })
      assert.equal(response.statusCode, 200)
      assert.deepEqual(response.json(), {
        uuid,
        status: 'rejected',
        walletAdapter: 'crossmark',
        resolvedAt: new Date(t.clock.now()).toISOString(),
        redirectUrl: `https://shop.example/back?id=${uuid}&tx=`,
      })
      const view = await appView(uuid)
      assert.equal(view.status, 'rejected')
      assert.equal(view.walletAdapter, 'crossmark')
      assert.equal(view.signerAddress, null)
      const page = (await signView(uuid)).json()
      assert.equal(page.status, 'rejected')
      assert.equal(page.redirectUrl, `https://shop.example/back?id=${uuid}&tx=`)
    })

    it('takes no wallet at all (the user rejected before choosing one)', async () => {
      const uuid = await create({ type: 'connect' })
      const response = await reject(uuid)
      assert.equal(response.statusCode, 200)
      assert.equal((await appView(uuid)).walletAdapter, null)
    })

    it('takes no body at all: every field of a rejection is optional', async () => {
      const uuid = await create({ type: 'connect' })
      const response = await t.inject({ method: 'POST', url: `/api/v1/sign/${uuid}/reject` })
      assert.equal(response.statusCode, 200, response.body)
      assert.equal(await statusOf(uuid), 'rejected')
    })
  })

  it('fills {uuid} and {txHash} of the return URL after signing', async () => {
    const wallet = Wallet.generate()
    const uuid = await create({
      type: 'sign',
      transaction: paymentTransaction(),
      options: { returnUrl: 'https://shop.example/done/{uuid}?tx={txHash}' },
    })
    const signed = signRequested(wallet, paymentTransaction())
    const response = await approve(uuid, { walletAdapter: 'developer', signedTransaction: signed.tx_blob })
    assert.equal(response.json().redirectUrl, `https://shop.example/done/${uuid}?tx=${signed.hash}`)
    const page = (await signView(uuid)).json()
    assert.equal(page.status, 'signed')
    assert.equal(page.signerAddress, wallet.classicAddress)
    assert.equal(page.txHash, signed.hash)
    assert.equal(page.redirectUrl, `https://shop.example/done/${uuid}?tx=${signed.hash}`)
  })

  describe('a payload that can no longer be resolved', () => {
    const wallet = Wallet.generate()

    it('is 410 once expired, for approving and rejecting; nothing is recorded', async () => {
      const uuid = await create({ type: 'signMessage', message: 'hi', options: { expiresIn: 60 } })
      t.clock.advance(60_000)
      const approval = await approve(uuid, { walletAdapter: 'gemwallet', publicKey: wallet.publicKey, signature: signText(wallet, 'hi') })
      assert.equal(approval.statusCode, 410)
      assert.equal((await reject(uuid)).statusCode, 410)
      const view = await appView(uuid)
      assert.equal(view.status, 'expired')
      assert.equal(view.signerAddress, null)
      assert.equal((await signView(uuid)).json().status, 'expired')
    })

    it('is 410 once the app cancelled it', async () => {
      const uuid = await create({ type: 'connect' })
      await t.inject({ method: 'DELETE', url: `/api/v1/payloads/${uuid}`, headers: bearer(apiKey) })
      assert.equal((await reject(uuid)).statusCode, 410)
    })

    it('is 409 once resolved, and the first resolution stands', async () => {
      const uuid = await create({ type: 'signMessage', message: 'hi' })
      assert.equal((await reject(uuid, { walletAdapter: 'gemwallet' })).statusCode, 200)
      const approval = await approve(uuid, { walletAdapter: 'gemwallet', publicKey: wallet.publicKey, signature: signText(wallet, 'hi') })
      assert.equal(approval.statusCode, 409)
      assert.deepEqual(approval.json(), { error: 'Payload is already rejected' })
      assert.equal((await reject(uuid)).statusCode, 409)
      assert.equal(await statusOf(uuid), 'rejected')
    })
  })

  it('lets exactly one of many concurrent approvals win; the others get 409', async () => {
    const uuid = await create({ type: 'sign', transaction: paymentTransaction() })
    const wallets = Array.from({ length: 6 }, () => Wallet.generate())
    const responses = await Promise.all(
      wallets.map((wallet) =>
        approve(uuid, { walletAdapter: 'gemwallet', signedTransaction: signRequested(wallet, paymentTransaction()).tx_blob }),
      ),
    )
    const codes = responses.map((response) => response.statusCode).sort()
    assert.deepEqual(codes, [200, 409, 409, 409, 409, 409])
    const winner = responses.find((response) => response.statusCode === 200)?.json()
    assert.equal((await appView(uuid)).signerAddress, winner.signerAddress)
  })

  it('lets one approval and one rejection race: exactly one wins', async () => {
    const wallet = Wallet.generate()
    const uuid = await create({ type: 'signMessage', message: 'race' })
    const [approval, rejection] = await Promise.all([
      approve(uuid, { walletAdapter: 'gemwallet', publicKey: wallet.publicKey, signature: signText(wallet, 'race') }),
      reject(uuid, { walletAdapter: 'gemwallet' }),
    ])
    assert.deepEqual([approval.statusCode, rejection.statusCode].sort(), [200, 409])
  })

  it(`limits each payload to ${SIGN_REQUESTS_PER_MINUTE} requests a minute`, async () => {
    const uuid = await create({ type: 'connect' })
    const other = await create({ type: 'connect' })
    for (let i = 0; i < SIGN_REQUESTS_PER_MINUTE; i++) assert.equal((await signView(uuid)).statusCode, 200)
    const limited = await signView(uuid)
    assert.equal(limited.statusCode, 429)
    assert.ok(Number(limited.headers['retry-after']) > 0)
    assert.equal((await reject(uuid)).statusCode, 429, 'every wallet-facing route counts')
    assert.equal((await signView(other)).statusCode, 200, 'another payload has its own budget')
    t.clock.advance(60_000)
    assert.equal((await signView(uuid)).statusCode, 200)
  })
})

forEachDatabase('wallet-facing API on mainnet', (dialect) => {
  let t: TestService
  let apiKey: string
  before(async () => {
    t = await startTestService(dialect, { env: { XRPL_NETWORK: 'mainnet' } })
    ;({ apiKey } = await t.createProject('free'))
  })
  after(() => t.stop())

  it('neither offers nor accepts the developer wallet', async () => {
    const wallet = Wallet.generate()
    const uuid = await createPayload(t, apiKey, { type: 'signMessage', message: 'm' })
    const view = (await t.inject({ method: 'GET', url: `/api/v1/sign/${uuid}` })).json()
    assert.equal(view.network, 'mainnet')
    assert.deepEqual(view.wallets, { xaman: false, developer: false })
    const body = { publicKey: wallet.publicKey, signature: signText(wallet, 'm') }
    const developer = await t.inject({
      method: 'POST',
      url: `/api/v1/sign/${uuid}/approve`,
      payload: { ...body, walletAdapter: 'developer' },
    })
    assert.equal(developer.statusCode, 403)
    assert.match(developer.json().error, /developer wallet is turned off on mainnet/)
    const gemwallet = await t.inject({
      method: 'POST',
      url: `/api/v1/sign/${uuid}/approve`,
      payload: { ...body, walletAdapter: 'gemwallet' },
    })
    assert.equal(gemwallet.statusCode, 200)
  })

  it('answers 502 for a multisigned or RegularKey transaction when no XRPL node is configured', async () => {
    const owner = Wallet.generate()
    const requested = { ...paymentTransaction(), Account: owner.classicAddress }
    const uuid = await createPayload(t, apiKey, { type: 'sign', transaction: requested })
    const response = await t.inject({
      method: 'POST',
      url: `/api/v1/sign/${uuid}/approve`,
      payload: { walletAdapter: 'gemwallet', signedTransaction: signRequested(Wallet.generate(), requested).tx_blob },
    })
    assert.equal(response.statusCode, 502)
    // The end user reads this on the signing page: it says what happened, never which setting the operator lacks.
    assert.match(response.json().error, /^The XRP Ledger cannot be reached from this service right now, so it cannot check/)
    assert.doesNotMatch(response.body, /XRPL_NODE_URL|configured/)
  })
})
