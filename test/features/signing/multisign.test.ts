// Multisigned requests (options.multisign): each signer of the Account's SignerList approves with their own signature,
// the service records each, and combines them at quorum. Against the rippled protocol double, with real xrpl keys.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { decodeAccountID } from 'ripple-address-codec'
import { decode } from 'ripple-binary-codec'
import { hashes, Wallet } from 'xrpl'
import { combineSignatures } from '../../../src/features/signing/multisign/combine.js'
import { type RunningService, startService } from '../../../src/main.js'
import { AppError } from '../../../src/platform/errors.js'
import { createLogger } from '../../../src/platform/logger.js'
import { forEachDatabase } from '../../support/databases.js'
import { type RippledDouble, startRippledDouble } from '../../support/rippled-double.js'
import { bearer, startTestService, type TestService } from '../../support/service.js'
import { openSse } from '../../support/sse.js'

const DESTINATION = 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe'

interface SignerSetup {
  account: Wallet
  signers: Wallet[]
}

forEachDatabase('multisigned requests', (dialect) => {
  let t: TestService
  let rippled: RippledDouble
  let apiKey: string

  before(async () => {
    rippled = await startRippledDouble()
    t = await startTestService(dialect, { env: { XRPL_NODE_URL: rippled.url } })
    ;({ apiKey } = await t.createProject('pro', 'Treasury'))
  })
  after(async () => {
    await t.stop()
    await rippled.close()
  })

  /** An account with a SignerList on the ledger double: `weights[i]` is the weight of signer i. */
  const accountWithSigners = (quorum: number, weights: number[]): SignerSetup => {
    const account = Wallet.generate()
    const signers = weights.map(() => Wallet.generate())
    rippled.setAccount(account.classicAddress, {
      signerList: {
        quorum,
        entries: signers.map((signer, index) => ({ account: signer.classicAddress, weight: weights[index] as number })),
      },
    })
    return { account, signers }
  }

  const create = async (setup: SignerSetup, type: 'sign' | 'signAndSubmit' = 'sign', amount = '1000000') => {
    const response = await t.inject({
      method: 'POST',
      url: '/api/v1/payloads',
      headers: bearer(apiKey),
      payload: {
        type,
        transaction: { TransactionType: 'Payment', Account: setup.account.classicAddress, Destination: DESTINATION, Amount: amount },
        options: { multisign: true },
      },
    })
    assert.equal(response.statusCode, 201, response.body)
    return response.json().uuid as string
  }
  const signView = async (uuid: string) => (await t.inject({ method: 'GET', url: `/api/v1/sign/${uuid}` })).json()
  /** What a signer's wallet signs: the request's transaction as the signing page shows it, for multisigning. */
  const signFor = async (uuid: string, signer: Wallet, change: Record<string, unknown> = {}) => {
    const { transaction } = await signView(uuid)
    return signer.sign({ ...transaction, ...change } as never, true).tx_blob
  }
  const approve = (uuid: string, signedTransaction: string, service: { inject: TestService['inject'] } = t) =>
    service.inject({ method: 'POST', url: `/api/v1/sign/${uuid}/approve`, payload: { walletAdapter: 'gemwallet', signedTransaction } })
  const reject = (uuid: string, body: object) => t.inject({ method: 'POST', url: `/api/v1/sign/${uuid}/reject`, payload: body })
  const appView = async (uuid: string) => {
    t.clock.advance(1000)
    const response = await t.inject({ method: 'GET', url: `/api/v1/payloads/${uuid}`, headers: bearer(apiKey) })
    assert.equal(response.statusCode, 200, response.body)
    return response.json()
  }
  const signedBy = (view: { multisign: { signers: Array<{ account: string; signed: boolean }> } }) =>
    view.multisign.signers.filter((signer) => signer.signed).map((signer) => signer.account)

  describe('creating one', () => {
    it('reads the signer list and completes Sequence and Fee, so that every signer signs the same transaction', async () => {
      const setup = accountWithSigners(2, [1, 1, 1])
      const uuid = await create(setup)
      const view = await appView(uuid)
      assert.equal(view.status, 'pending')
      assert.deepEqual(view.multisign, {
        quorum: 2,
        weight: 0,
        signers: setup.signers.map((signer) => ({
          account: signer.classicAddress,
          weight: 1,
          signed: false,
          signedAt: null,
          rejectedAt: null,
        })),
      })
      const { transaction } = await signView(uuid)
      assert.equal(transaction.Sequence, 1)
      // The double's base fee is 10 drops (12 with the cushion): one per signature, for up to 3 signers and the account.
      assert.equal(transaction.Fee, String(12 * 4))
      assert.equal(transaction.LastLedgerSequence, undefined)
    })

    it('is refused without a signer list, for a missing account, for other types, and without a node', async () => {
      const plain = Wallet.generate()
      rippled.setAccount(plain.classicAddress)
      const refused = async (body: object) => {
        const response = await t.inject({ method: 'POST', url: '/api/v1/payloads', headers: bearer(apiKey), payload: body })
        assert.equal(response.statusCode, 422, response.body)
        return response.json().details.map((detail: { field: string }) => detail.field)
      }
      const payment = (account: string) => ({ TransactionType: 'Payment', Account: account, Destination: DESTINATION, Amount: '1' })
      assert.deepEqual(await refused({ type: 'sign', transaction: payment(plain.classicAddress), options: { multisign: true } }), [
        'transaction.Account',
      ])
      assert.deepEqual(
        await refused({ type: 'sign', transaction: payment(Wallet.generate().classicAddress), options: { multisign: true } }),
        ['transaction.Account'],
      )
      assert.deepEqual(await refused({ type: 'signMessage', message: 'hello', options: { multisign: true } }), ['options.multisign'])
      assert.deepEqual(
        await refused({
          type: 'sign',
          transaction: { TransactionType: 'Payment', Destination: DESTINATION, Amount: '1' },
          options: { multisign: true },
        }),
        ['transaction.Account'],
      )

      const withoutNode = await startTestService(dialect)
      try {
        const { apiKey: key } = await withoutNode.createProject('pro')
        const response = await withoutNode.inject({
          method: 'POST',
          url: '/api/v1/payloads',
          headers: bearer(key),
          payload: { type: 'sign', transaction: payment(plain.classicAddress), options: { multisign: true } },
        })
        assert.equal(response.statusCode, 422)
        assert.deepEqual(
          response.json().details.map((detail: { field: string }) => detail.field),
          ['options.multisign'],
        )
      } finally {
        await withoutNode.stop()
      }
    })
  })

  describe('collecting signatures', () => {
    it('2 of 3: records the first signature, and at quorum resolves with the combined transaction', async () => {
      const setup = accountWithSigners(2, [1, 1, 1])
      const [alice, bob] = setup.signers as [Wallet, Wallet, Wallet]
      const uuid = await create(setup)

      const first = await approve(uuid, await signFor(uuid, alice))
      assert.equal(first.statusCode, 200, first.body)
      assert.equal(first.json().status, 'pending')
      assert.equal(first.json().multisign.weight, 1)
      const halfway = await appView(uuid)
      assert.equal(halfway.status, 'pending')
      assert.deepEqual(signedBy(halfway), [alice.classicAddress])
      assert.equal(halfway.txBlob, null)

      const second = await approve(uuid, await signFor(uuid, bob))
      assert.equal(second.statusCode, 200, second.body)
      assert.equal(second.json().status, 'signed')
      const done = await appView(uuid)
      assert.equal(done.status, 'signed')
      assert.equal(done.signerAddress, setup.account.classicAddress)
      assert.equal(done.multisign.weight, 2)

      // The combined blob: what xrpl's decoder reads, both signers sorted as the ledger requires, its hash the txHash.
      const combined = decode(done.txBlob) as { Account: string; SigningPubKey: string; Signers: Array<{ Signer: { Account: string } }> }
      assert.equal(combined.Account, setup.account.classicAddress)
      assert.equal(combined.SigningPubKey, '')
      const accounts = combined.Signers.map((entry) => entry.Signer.Account)
      assert.deepEqual(new Set(accounts), new Set([alice.classicAddress, bob.classicAddress]))
      assert.deepEqual(
        accounts,
        [...accounts].sort((a, b) => accountIdOrder(a, b)),
      )
      assert.equal(hashes.hashSignedTx(done.txBlob), done.txHash)
      assert.deepEqual(rippled.submitted.includes(done.txBlob), false, 'sign never submits')
    })

    it('weighted 3 of 5: the weight-2 signer and one other reach the quorum; two weight-1 signers do not', async () => {
      const setup = accountWithSigners(3, [2, 1, 1, 1, 1])
      const [heavy, one, two] = setup.signers as Wallet[] as [Wallet, Wallet, Wallet]
      const uuid = await create(setup)
      assert.equal((await approve(uuid, await signFor(uuid, one))).json().status, 'pending')
      const short = await approve(uuid, await signFor(uuid, two))
      assert.equal(short.json().status, 'pending')
      assert.equal(short.json().multisign.weight, 2)
      const reached = await approve(uuid, await signFor(uuid, heavy))
      assert.equal(reached.json().status, 'signed')
      const view = await appView(uuid)
      assert.equal(view.multisign.weight, 4)
      assert.equal((decode(view.txBlob) as { Signers: unknown[] }).Signers.length, 3)
    })

    it('refuses a signer not on the list, a second signature of one signer and a changed transaction, recording none', async () => {
      const setup = accountWithSigners(2, [1, 1, 1])
      const [alice] = setup.signers as [Wallet]
      const uuid = await create(setup)

      const stranger = await approve(uuid, await signFor(uuid, Wallet.generate()))
      assert.equal(stranger.statusCode, 422)
      assert.deepEqual(fields(stranger), ['signedTransaction.Signers[0].Signer.Account'])

      assert.equal((await approve(uuid, await signFor(uuid, alice))).statusCode, 200)
      const again = await approve(uuid, await signFor(uuid, alice))
      assert.equal(again.statusCode, 422)
      assert.deepEqual(fields(again), ['signedTransaction'])

      const [, bob] = setup.signers as [Wallet, Wallet]
      const tampered = await approve(uuid, await signFor(uuid, bob, { Amount: '999999999' }))
      assert.equal(tampered.statusCode, 422)
      assert.deepEqual(fields(tampered), ['signedTransaction.Amount'])
      const widened = await approve(uuid, await signFor(uuid, bob, { LastLedgerSequence: 99_999 }))
      assert.equal(widened.statusCode, 422)
      assert.deepEqual(fields(widened), ['signedTransaction.LastLedgerSequence'])
      const single = await approve(uuid, bob.sign((await signView(uuid)).transaction).tx_blob)
      assert.equal(single.statusCode, 422)

      const view = await appView(uuid)
      assert.equal(view.status, 'pending')
      assert.deepEqual(signedBy(view), [alice.classicAddress])
      assert.equal(view.multisign.weight, 1)
    })

    it("does not resolve with a signer the ledger has since removed from the list: the quorum is the ledger's at completion", async () => {
      const setup = accountWithSigners(2, [1, 1, 1])
      const [alice, bob, carol] = setup.signers as [Wallet, Wallet, Wallet]
      const uuid = await create(setup)
      assert.equal((await approve(uuid, await signFor(uuid, alice))).statusCode, 200)

      // Alice's key is compromised: the account's owners replace her on the ledger (same quorum, Dave instead of her).
      const dave = Wallet.generate()
      rippled.setAccount(setup.account.classicAddress, {
        signerList: {
          quorum: 2,
          entries: [bob, carol, dave].map((signer) => ({ account: signer.classicAddress, weight: 1 })),
        },
      })
      const second = await approve(uuid, await signFor(uuid, bob))
      assert.equal(second.statusCode, 422, second.body)
      assert.deepEqual(fields(second), ['signedTransaction.Signers'])
      const view = await appView(uuid)
      assert.equal(view.status, 'pending')
      assert.equal(view.txBlob, null)
    })

    it('refuses a signer who adds a Flags field the others did not sign, so that the quorum never fails to combine', async () => {
      const setup = accountWithSigners(2, [1, 1, 1])
      const [alice, bob] = setup.signers as [Wallet, Wallet, Wallet]
      const uuid = await create(setup)
      // A wallet may add Flags to a single-signed transaction; multisigned, every signer must sign the same bytes.
      for (const flags of [0, 0x80000000]) {
        const odd = await approve(uuid, await signFor(uuid, alice, { Flags: flags }))
        assert.equal(odd.statusCode, 422, odd.body)
        assert.deepEqual(fields(odd), ['signedTransaction.Flags'])
      }
      assert.equal((await approve(uuid, await signFor(uuid, alice))).statusCode, 200)
      const second = await approve(uuid, await signFor(uuid, bob))
      assert.equal(second.statusCode, 200, second.body)
      assert.equal(second.json().status, 'signed')
    })

    it('combines signatures that differ as a 422 (the completing one is taken back), never a 500', async () => {
      const setup = accountWithSigners(2, [1, 1])
      const [alice, bob] = setup.signers as [Wallet, Wallet]
      const uuid = await create(setup)
      const signer = (wallet: Wallet, signedBlob: string) => ({
        account: wallet.classicAddress,
        weight: 1,
        signedBlob,
        signedAtMs: 1,
        rejectedAtMs: null,
        walletAdapter: 'gemwallet',
      })
      const state = {
        quorum: 2,
        signers: [signer(alice, await signFor(uuid, alice, { Flags: 0 })), signer(bob, await signFor(uuid, bob))],
      }
      assert.throws(
        () => combineSignatures(state),
        (error: unknown) => error instanceof AppError && error.statusCode === 422,
      )
    })

    it('counts concurrent signatures of different signers, none lost', async () => {
      const setup = accountWithSigners(5, [1, 1, 1, 1, 1])
      const uuid = await create(setup)
      const blobs = await Promise.all(setup.signers.slice(0, 4).map((signer) => signFor(uuid, signer)))
      const answers = await Promise.all(blobs.map((blob) => approve(uuid, blob)))
      assert.deepEqual(
        answers.map((answer) => answer.statusCode),
        [200, 200, 200, 200],
      )
      const view = await appView(uuid)
      assert.equal(view.status, 'pending')
      assert.equal(view.multisign.weight, 4)
      const last = await approve(uuid, await signFor(uuid, setup.signers[4] as Wallet))
      assert.equal(last.json().status, 'signed')
    })

    if (dialect === 'postgres') {
      it('counts concurrent signatures on two instances of the service, none lost', async () => {
        const second: RunningService = await startService(t.config, {
          clock: t.clock,
          logger: createLogger('silent'),
          listen: false,
          workers: false,
        })
        try {
          const setup = accountWithSigners(6, [1, 1, 1, 1, 1, 1])
          const uuid = await create(setup)
          const blobs = await Promise.all(setup.signers.map((signer) => signFor(uuid, signer)))
          const instances = [t, { inject: second.app.inject.bind(second.app) }] as const
          const answers = await Promise.all(blobs.map((blob, index) => approve(uuid, blob, instances[index % 2] as never)))
          assert.deepEqual(
            answers.map((answer) => answer.statusCode),
            [200, 200, 200, 200, 200, 200],
          )
          const view = await appView(uuid)
          assert.equal(view.status, 'signed')
          assert.equal(view.multisign.weight, 6)
          assert.equal((decode(view.txBlob) as { Signers: unknown[] }).Signers.length, 6)
        } finally {
          await second.stop()
        }
      })
    }
  })

  describe('rejections', () => {
    it('records each signer rejection, and rejects the request once the quorum cannot be reached', async () => {
      const setup = accountWithSigners(2, [1, 1, 1])
      const [alice, bob, carol] = setup.signers as [Wallet, Wallet, Wallet]
      const uuid = await create(setup)

      const anonymous = await reject(uuid, { walletAdapter: 'gemwallet' })
      assert.equal(anonymous.statusCode, 422)
      assert.deepEqual(fields(anonymous), ['signerAccount'])
      assert.equal((await reject(uuid, { signerAccount: Wallet.generate().classicAddress })).statusCode, 422)

      assert.equal((await approve(uuid, await signFor(uuid, alice))).statusCode, 200)
      const first = await reject(uuid, { walletAdapter: 'gemwallet', signerAccount: bob.classicAddress })
      assert.equal(first.statusCode, 200, first.body)
      assert.equal(first.json().status, 'pending', 'alice and carol can still reach 2')
      const view = await appView(uuid)
      assert.notEqual(view.multisign.signers.find((signer: { account: string }) => signer.account === bob.classicAddress).rejectedAt, null)

      const second = await reject(uuid, { walletAdapter: 'gemwallet', signerAccount: carol.classicAddress })
      assert.equal(second.json().status, 'rejected')
      assert.equal((await appView(uuid)).status, 'rejected')
    })
  })

  describe('a multisigned request that can no longer be signed', () => {
    it('refuses a rejection naming no signer with 422 once it is rejected or expired, and changes nothing', async () => {
      const setup = accountWithSigners(2, [1, 1])
      const [alice, bob] = setup.signers as [Wallet, Wallet]
      const rejectedUuid = await create(setup)
      assert.equal((await reject(rejectedUuid, { signerAccount: alice.classicAddress })).json().status, 'rejected')
      const expiredUuid = await create(setup)
      t.clock.advance(24 * 60 * 60 * 1000)
      for (const [uuid, status] of [
        [rejectedUuid, 'rejected'],
        [expiredUuid, 'expired'],
      ] as const) {
        const anonymous = await reject(uuid, { walletAdapter: 'gemwallet' })
        assert.equal(anonymous.statusCode, 422)
        assert.deepEqual(fields(anonymous), ['signerAccount'])
        const view = await appView(uuid)
        assert.equal(view.status, status)
        assert.equal(view.walletAdapter, null)
      }
      assert.equal((await reject(expiredUuid, { signerAccount: bob.classicAddress })).statusCode, 410)
    })

    it('is cancelled by the application like any request (DELETE: expired)', async () => {
      const uuid = await create(accountWithSigners(2, [1, 1]))
      const cancelled = await t.inject({ method: 'DELETE', url: `/api/v1/payloads/${uuid}`, headers: bearer(apiKey) })
      assert.equal(cancelled.statusCode, 200, cancelled.body)
      assert.equal((await appView(uuid)).status, 'expired')
    })
  })

  describe('signAndSubmit', () => {
    it('submits the combined transaction at quorum, and takes the completing signature back when the ledger refuses it', async () => {
      const setup = accountWithSigners(2, [1, 1])
      const [alice, bob] = setup.signers as [Wallet, Wallet]
      const uuid = await create(setup, 'signAndSubmit')
      assert.equal((await approve(uuid, await signFor(uuid, alice))).json().status, 'pending')

      rippled.setSubmitResult('tefMAX_LEDGER')
      const refused = await approve(uuid, await signFor(uuid, bob))
      assert.equal(refused.statusCode, 422, refused.body)
      const afterRefusal = await appView(uuid)
      assert.equal(afterRefusal.status, 'pending')
      assert.deepEqual(signedBy(afterRefusal), [alice.classicAddress])

      rippled.setSubmitResult('tesSUCCESS')
      const accepted = await approve(uuid, await signFor(uuid, bob))
      assert.equal(accepted.statusCode, 200, accepted.body)
      assert.equal(accepted.json().status, 'signed')
      const view = await appView(uuid)
      assert.equal(view.submission.engineResult, 'tesSUCCESS')
      assert.equal(rippled.submitted.at(-1), view.txBlob)
      assert.equal(hashes.hashSignedTx(view.txBlob), view.txHash)
    })
  })

  describe('notifications', () => {
    it('tells payload.signature_added only to webhooks that list it, and the resolution to both', async () => {
      const setup = accountWithSigners(2, [1, 1])
      const [alice, bob] = setup.signers as [Wallet, Wallet]
      const hook = async (events?: string[]) => {
        const response = await t.inject({
          method: 'POST',
          url: '/api/v1/webhooks',
          headers: bearer(apiKey),
          payload: { url: 'http://127.0.0.1:9/hook', ...(events ? { events } : {}) },
        })
        assert.equal(response.statusCode, 201, response.body)
        return response.json().id as string
      }
      const listing = await hook(['payload.signature_added', 'payload.signed'])
      const defaults = await hook()
      const uuid = await create(setup)
      await approve(uuid, await signFor(uuid, alice))
      await approve(uuid, await signFor(uuid, bob))
      const eventsOf = async (id: string) => {
        const response = await t.inject({ method: 'GET', url: `/api/v1/webhooks/${id}/deliveries`, headers: bearer(apiKey) })
        assert.equal(response.statusCode, 200, response.body)
        return response
          .json()
          .deliveries.filter((delivery: { payloadUuid: string }) => delivery.payloadUuid === uuid)
          .map((delivery: { event: string }) => delivery.event)
          .sort()
      }
      assert.deepEqual(await eventsOf(listing), ['payload.signature_added', 'payload.signature_added', 'payload.signed'])
      assert.deepEqual(await eventsOf(defaults), ['payload.signed'])
    })

    it('streams each signature on the live stream, then the resolution', async () => {
      const live = await startTestService(dialect, { listen: true, env: { XRPL_NODE_URL: rippled.url } })
      try {
        const { apiKey: key } = await live.createProject('pro')
        const setup = accountWithSigners(2, [1, 1])
        const [alice, bob] = setup.signers as [Wallet, Wallet]
        const created = await fetch(`${live.url}/api/v1/payloads`, {
          method: 'POST',
          headers: { ...bearer(key), 'content-type': 'application/json' },
          body: JSON.stringify({
            type: 'sign',
            transaction: { TransactionType: 'Payment', Account: setup.account.classicAddress, Destination: DESTINATION, Amount: '5' },
            options: { multisign: true },
          }),
        })
        const { uuid } = (await created.json()) as { uuid: string }
        const stream = await openSse(`${live.url}/api/v1/payloads/${uuid}/events`, bearer(key))
        try {
          const weightOf = (data: unknown) => (data as { multisign: { weight: number } }).multisign.weight
          assert.equal(weightOf(await stream.nextData()), 0)
          const { transaction } = (await (await fetch(`${live.url}/api/v1/sign/${uuid}`)).json()) as { transaction: object }
          const approveOn = (signer: Wallet) =>
            fetch(`${live.url}/api/v1/sign/${uuid}/approve`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ walletAdapter: 'gemwallet', signedTransaction: signer.sign(transaction as never, true).tx_blob }),
            })
          await approveOn(alice)
          const first = (await stream.nextData()) as { status: string }
          assert.equal(first.status, 'pending')
          assert.equal(weightOf(first), 1)
          await approveOn(bob)
          // The completing signature is a signature like the others, then the request resolves.
          const second = (await stream.nextData()) as { status: string }
          assert.deepEqual([second.status, weightOf(second)], ['pending', 2])
          const resolved = (await stream.nextData()) as { status: string }
          assert.equal(resolved.status, 'signed')
          assert.equal(weightOf(resolved), 2)
        } finally {
          stream.close()
        }
      } finally {
        await live.stop()
      }
    })
  })
})

function fields(response: { json(): { details?: Array<{ field: string }> } }): string[] {
  return (response.json().details ?? []).map((detail) => detail.field)
}

/** The ledger's order of Signers: by the numeric value of the account ID. */
function accountIdOrder(a: string, b: string): number {
  const id = (address: string) => Buffer.from(decodeAccountID(address)).toString('hex')
  return id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0
}
