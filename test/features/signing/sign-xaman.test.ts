import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { encode, encodeForSigning } from 'ripple-binary-codec'
import { sign } from 'ripple-keypairs'
import { Wallet } from 'xrpl'
import { XAMAN_CHECK_INTERVAL_MS } from '../../../src/features/signing/xaman/outcome-worker.js'
import { RESERVATION_LAPSES_AFTER_MS, xamanSignRequestsRepository } from '../../../src/features/signing/xaman/sign-requests-repository.js'
import { MAX_XAMAN_ANSWER_BYTES } from '../../../src/features/signing/xaman/xaman-client.js'
import { startService } from '../../../src/main.js'
import { createLogger } from '../../../src/platform/logger.js'
import { forEachDatabase, withPayloadUpdatesFailing } from '../../support/databases.js'
import { paymentTransaction } from '../../support/fixtures.js'
import { createPayload, readPayload } from '../../support/payloads.js'
import { type RippledDouble, startRippledDouble } from '../../support/rippled-double.js'
import { startTestService, type TestService } from '../../support/service.js'
import { signRequested } from '../../support/wallet-signing.js'
import { startXamanDouble, type XamanDouble } from '../../support/xaman-double.js'

const TF_FULLY_CANONICAL_SIG = 0x80000000

/** What Xaman answers a SignIn with: a signed pseudo-transaction of Flags, Sequence, Fee and Account, without a type. */
function xamanSignIn(wallet: Wallet): string {
  const fields = { Flags: TF_FULLY_CANONICAL_SIG, Sequence: 2, Fee: '12', Account: wallet.classicAddress, SigningPubKey: wallet.publicKey }
  return encode({ ...fields, TxnSignature: sign(encodeForSigning(fields), wallet.privateKey) })
}

/** What Xaman answers a sign request with: the requested transaction completed by the app, and signed. */
function xamanSigned(wallet: Wallet, transaction: Record<string, unknown>) {
  return signRequested(wallet, transaction, { Flags: TF_FULLY_CANONICAL_SIG })
}

forEachDatabase('Xaman through its platform API', (dialect) => {
  let t: TestService
  let xaman: XamanDouble
  let rippled: RippledDouble
  let apiKey: string

  before(async () => {
    xaman = await startXamanDouble()
    rippled = await startRippledDouble()
    t = await startTestService(dialect, {
      env: { XAMAN_API_KEY: xaman.apiKey, XAMAN_API_SECRET: xaman.apiSecret, XAMAN_API_URL: xaman.url, XRPL_NODE_URL: rippled.url },
    })
    ;({ apiKey } = await t.createProject('pro', 'Example Shop'))
  })
  after(async () => {
    await t.stop()
    await xaman.close()
    await rippled.close()
  })

  const create = (body: object) => createPayload(t, apiKey, body)
  const startXaman = (uuid: string) => t.inject({ method: 'POST', url: `/api/v1/sign/${uuid}/xaman`, payload: {} })
  /** What the worker does: a batch, and at once another while the last was full, until every due request was looked at. */
  const lookAtAllDue = async () => {
    while (await t.service.ctx.signing.xamanOutcomes.checkDue()) {}
  }
  /** The Xaman worker's next look (each request is due every 2 seconds, so the clock moves on first), then the page's read. */
  const pagePoll = async (uuid: string) => {
    t.clock.advance(XAMAN_CHECK_INTERVAL_MS)
    await lookAtAllDue()
    const response = await t.inject({ method: 'GET', url: `/api/v1/sign/${uuid}` })
    assert.equal(response.statusCode, 200, response.body)
    return response.json()
  }
  const appView = (uuid: string) => readPayload(t, apiKey, uuid)
  const xamanRequestsOf = (uuid: string) => xamanSignRequestsRepository.countForPayload(t.service.ctx.storage.db, uuid)
  /** Starts a Xaman request for a new payload and returns both uuids. */
  const started = async (body: object) => {
    const uuid = await create(body)
    const response = await startXaman(uuid)
    assert.equal(response.statusCode, 200, response.body)
    return { uuid, xamanUuid: (xaman.created.at(-1) as { uuid: string }).uuid }
  }

  it('offers Xaman to the page', async () => {
    const view = await pagePoll(await create({ type: 'connect' }))
    assert.deepEqual(view.wallets, { xaman: true, developer: true })
  })

  it('creates the Xaman sign request server-side with the credentials, asking it to sign only', async () => {
    const uuid = await create({ type: 'sign', transaction: paymentTransaction(), options: { customInstructions: 'Order #7' } })
    const response = await startXaman(uuid)
    assert.equal(response.statusCode, 200, response.body)
    const request = xaman.created.at(-1)
    assert.ok(request)
    assert.deepEqual(response.json(), {
      qrUrl: `https://xumm.app/sign/${request.uuid}_q.png`,
      deepLink: `https://xumm.app/sign/${request.uuid}`,
    })
    const signingUrl = `http://countersign.test/sign/${uuid}`
    assert.deepEqual(request.body, {
      txjson: paymentTransaction(),
      options: { submit: false, return_url: { app: signingUrl, web: signingUrl } },
      custom_meta: { instruction: 'Order #7' },
    })
    assert.equal(request.headers['x-api-key'], xaman.apiKey)
    assert.equal(request.headers['x-api-secret'], xaman.apiSecret)
  })

  it('sign: the worker fetches the signed blob from Xaman, verifies it, and resolves', async () => {
    const wallet = Wallet.generate()
    const { uuid, xamanUuid } = await started({ type: 'sign', transaction: paymentTransaction() })
    assert.equal((await pagePoll(uuid)).status, 'pending')
    const signed = xamanSigned(wallet, paymentTransaction())
    xaman.sign(xamanUuid, signed.tx_blob, wallet.classicAddress)
    const view = await pagePoll(uuid)
    assert.equal(view.status, 'signed')
    assert.equal(view.signerAddress, wallet.classicAddress)
    assert.equal(view.txHash, signed.hash)
    assert.equal(view.walletAdapter, 'xaman')
    const app = await appView(uuid)
    assert.equal(app.txBlob, signed.tx_blob)
    assert.equal(app.walletAdapter, 'xaman')
  })

  it('signAndSubmit: the service, not Xaman, submits the verified blob', async () => {
    const wallet = Wallet.generate()
    const { uuid, xamanUuid } = await started({ type: 'signAndSubmit', transaction: paymentTransaction() })
    const signed = xamanSigned(wallet, paymentTransaction())
    xaman.sign(xamanUuid, signed.tx_blob, wallet.classicAddress)
    assert.equal((await pagePoll(uuid)).status, 'signed')
    assert.ok(rippled.submitted.includes(signed.tx_blob))
    assert.equal((await appView(uuid)).submission.engineResult, 'tesSUCCESS')
  })

  it('connect: a Xaman SignIn, whose signature is verified and whose account is taken', async () => {
    const wallet = Wallet.generate()
    const { uuid, xamanUuid } = await started({ type: 'connect' })
    assert.deepEqual(xaman.created.at(-1)?.body.txjson, { TransactionType: 'SignIn' })
    xaman.sign(xamanUuid, xamanSignIn(wallet), wallet.classicAddress)
    const view = await pagePoll(uuid)
    assert.equal(view.status, 'signed')
    assert.equal(view.signerAddress, wallet.classicAddress)
    const app = await appView(uuid)
    assert.equal(app.publicKey, wallet.publicKey.toUpperCase())
    assert.equal(app.walletAdapter, 'xaman')
  })

  it('connect: the same account signs in with Xaman again, with the very same SignIn, which holds nothing fresh', async () => {
    const wallet = Wallet.generate()
    const signIn = xamanSignIn(wallet)
    for (const round of [1, 2, 3]) {
      const { uuid, xamanUuid } = await started({ type: 'connect' })
      xaman.sign(xamanUuid, signIn, wallet.classicAddress)
      const view = await pagePoll(uuid)
      assert.equal(view.status, 'signed', `sign-in ${round}`)
      assert.equal(view.signerAddress, wallet.classicAddress)
    }
  })

  it('connect: a SignIn for another account than Xaman reports is not accepted', async () => {
    const { uuid, xamanUuid } = await started({ type: 'connect' })
    xaman.sign(xamanUuid, xamanSignIn(Wallet.generate()), Wallet.generate().classicAddress)
    assert.equal((await pagePoll(uuid)).status, 'pending')
  })

  it('options.signers: Xaman is told the accounts, and a SignIn by another account is not accepted', async () => {
    const allowed = Wallet.generate()
    const other = Wallet.generate()
    const { uuid, xamanUuid } = await started({ type: 'connect', options: { signers: [allowed.classicAddress] } })
    assert.deepEqual((xaman.created.at(-1)?.body.options as { signers?: string[] } | undefined)?.signers, [allowed.classicAddress])
    xaman.sign(xamanUuid, xamanSignIn(other), other.classicAddress)
    assert.equal((await pagePoll(uuid)).status, 'pending')
    const second = await startXaman(uuid)
    assert.equal(second.statusCode, 200)
    const secondUuid = (xaman.created.at(-1) as { uuid: string }).uuid
    xaman.sign(secondUuid, xamanSignIn(allowed), allowed.classicAddress)
    const view = await pagePoll(uuid)
    assert.equal(view.status, 'signed')
    assert.equal(view.signerAddress, allowed.classicAddress)
  })

  it('two instances look at each Xaman request once', async () => {
    const other = await startService(t.config, { listen: false, workers: false, logger: createLogger('silent'), clock: t.clock })
    try {
      const requests = await Promise.all([started({ type: 'connect' }), started({ type: 'connect' })])
      t.clock.advance(XAMAN_CHECK_INTERVAL_MS)
      const instances = [t.service, other]
      while ((await Promise.all(instances.map((instance) => instance.ctx.signing.xamanOutcomes.checkDue()))).some(Boolean)) {}
      for (const { xamanUuid } of requests) assert.equal(xaman.reads.get(xamanUuid), 1)
    } finally {
      await other.stop()
    }
  })

  it('a request whose look fails on an unexpected database error does not hold up the requests after it, and is looked at again after its lease', async () => {
    const broken = await started({ type: 'connect' })
    t.clock.advance(1000)
    const other = await started({ type: 'connect' })
    for (const { xamanUuid } of [broken, other]) {
      const wallet = Wallet.generate()
      xaman.sign(xamanUuid, xamanSignIn(wallet), wallet.classicAddress)
    }
    t.clock.advance(XAMAN_CHECK_INTERVAL_MS)
    await withPayloadUpdatesFailing(t.service.ctx.storage.db, dialect, broken.uuid, lookAtAllDue)
    assert.equal((await appView(other.uuid)).status, 'signed', 'the request after the failing one is looked at')
    assert.equal((await appView(broken.uuid)).status, 'pending')
    t.clock.advance(60_000)
    await lookAtAllDue()
    assert.equal((await appView(broken.uuid)).status, 'signed', 'looked at again once its lease lapsed')
  })

  it('a user who rejects in Xaman rejects the request', async () => {
    const { uuid, xamanUuid } = await started({ type: 'connect' })
    xaman.reject(xamanUuid)
    const view = await pagePoll(uuid)
    assert.equal(view.status, 'rejected')
    assert.equal(view.walletAdapter, 'xaman')
  })

  /** A multisigned request of an account whose list has three signers, two of whom make the quorum. */
  const createMultisigned = async () => {
    const account = Wallet.generate()
    const signers = [Wallet.generate(), Wallet.generate(), Wallet.generate()]
    rippled.setAccount(account.classicAddress, {
      signerList: { quorum: 2, entries: signers.map((signer) => ({ account: signer.classicAddress, weight: 1 })) },
    })
    return create({ type: 'sign', transaction: { ...paymentTransaction(), Account: account.classicAddress }, options: { multisign: true } })
  }

  it('refuses a multisigned request: Xaman signs with one key, and one rejection there rejected the request for every signer', async () => {
    const uuid = await createMultisigned()
    const requestsBefore = xaman.created.length
    const response = await startXaman(uuid)
    assert.equal(response.statusCode, 422, response.body)
    assert.deepEqual(
      response.json().details.map((detail: { field: string }) => detail.field),
      ['walletAdapter'],
    )
    assert.equal(xaman.created.length, requestsBefore, 'Xaman was not asked')
    assert.equal(await xamanRequestsOf(uuid), 0)
    // Any one person who scanned such a request and pressed Reject in Xaman rejected it for the whole signer list, its
    // quorum still reachable, no signer's rejection recorded.
    const view = await pagePoll(uuid)
    assert.equal(view.status, 'pending')
    assert.ok(view.multisign.signers.every((signer: { rejectedAt: string | null }) => signer.rejectedAt === null))
  })

  it('a rejection in Xaman of a multisigned request started before it was refused does not reject the request', async () => {
    const uuid = await createMultisigned()
    // As an earlier version started it: a Xaman request made, and recorded for the payload.
    const made = await fetch(`${xaman.url}/api/v1/platform/payload`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': xaman.apiKey, 'x-api-secret': xaman.apiSecret },
      body: JSON.stringify({ txjson: {}, options: { submit: false } }),
    })
    const { uuid: xamanUuid } = (await made.json()) as { uuid: string }
    const placeholder = await xamanSignRequestsRepository.reserve(t.service.ctx.storage.db, dialect, {
      payloadUuid: uuid,
      nowMs: t.clock.now(),
      max: 5,
    })
    assert.ok(placeholder)
    assert.ok(await xamanSignRequestsRepository.fill(t.service.ctx.storage.db, placeholder, xamanUuid, t.clock.now()))
    xaman.reject(xamanUuid)
    assert.equal((await pagePoll(uuid)).status, 'pending')
  })

  it('an expired Xaman request changes nothing and is not read again', async () => {
    const { uuid, xamanUuid } = await started({ type: 'connect' })
    xaman.expire(xamanUuid)
    assert.equal((await pagePoll(uuid)).status, 'pending')
    assert.equal(xaman.reads.get(xamanUuid), 1)
    assert.equal((await pagePoll(uuid)).status, 'pending')
    assert.equal(xaman.reads.get(xamanUuid), 1)
  })

  it('a signed result that does not verify leaves the request pending, and is not read again', async () => {
    const wallet = Wallet.generate()
    const { uuid, xamanUuid } = await started({ type: 'sign', transaction: paymentTransaction() })
    xaman.sign(xamanUuid, xamanSigned(wallet, paymentTransaction('5000000')).tx_blob, wallet.classicAddress)
    assert.equal((await pagePoll(uuid)).status, 'pending')
    assert.equal(xaman.reads.get(xamanUuid), 1)
    assert.equal((await appView(uuid)).txBlob, null)
    await pagePoll(uuid)
    assert.equal(xaman.reads.get(xamanUuid), 1)
  })

  it('reading the request never asks Xaman; the worker asks about each request at most every 2 seconds', async () => {
    const { uuid, xamanUuid } = await started({ type: 'connect' })
    for (let i = 0; i < 3; i++) assert.equal((await t.inject({ method: 'GET', url: `/api/v1/sign/${uuid}` })).statusCode, 200)
    assert.equal(xaman.reads.get(xamanUuid), undefined, 'a GET writes nothing and asks nobody')
    await pagePoll(uuid)
    assert.equal(xaman.reads.get(xamanUuid), 1)
    await lookAtAllDue()
    assert.equal(xaman.reads.get(xamanUuid), 1, 'not due again yet')
    await pagePoll(uuid)
    assert.equal(xaman.reads.get(xamanUuid), 2, 'read again once 2 seconds have passed')
  })

  it('a signed result reaches the page’s live stream without the page asking', async () => {
    const wallet = Wallet.generate()
    const { uuid, xamanUuid } = await started({ type: 'connect' })
    const seen: string[] = []
    const unsubscribe = t.service.ctx.liveEvents.subscribe(uuid, (change) => {
      if (change !== null) seen.push(change.status)
    })
    try {
      xaman.sign(xamanUuid, xamanSignIn(wallet), wallet.classicAddress)
      t.clock.advance(XAMAN_CHECK_INTERVAL_MS)
      await lookAtAllDue()
      assert.deepEqual(seen, ['signed'])
    } finally {
      unsubscribe()
    }
  })

  it('refuses signMessage: Xaman does not sign free-form messages', async () => {
    const uuid = await create({ type: 'signMessage', message: 'hello' })
    const response = await startXaman(uuid)
    assert.equal(response.statusCode, 422)
    assert.match(response.json().details[0].message, /not free-form messages/)
  })

  it('caps the Xaman requests of one payload', async () => {
    const uuid = await create({ type: 'connect' })
    for (let i = 0; i < 5; i++) assert.equal((await startXaman(uuid)).statusCode, 200)
    const capped = await startXaman(uuid)
    assert.equal(capped.statusCode, 429)
    assert.match(capped.json().error, /already has 5 Xaman sign requests/)
  })

  it("caps them exactly when a visitor races 30 starts of one payload's Xaman request (each costs the operator's quota)", async () => {
    const uuid = await create({ type: 'connect' })
    const made = xaman.created.length
    const answers = await Promise.all(Array.from({ length: 30 }, () => startXaman(uuid)))
    assert.equal(answers.filter((answer) => answer.statusCode === 200).length, 5)
    assert.equal(answers.filter((answer) => answer.statusCode === 429).length, 25)
    assert.equal(xaman.created.length - made, 5, 'Xaman was asked five times')
    assert.equal(await xamanRequestsOf(uuid), 5)
  })

  it('a start that Xaman fails frees its place among the five', async () => {
    const uuid = await create({ type: 'connect' })
    xaman.setDown(true)
    try {
      for (let i = 0; i < 6; i++) assert.equal((await startXaman(uuid)).statusCode, 502)
    } finally {
      xaman.setDown(false)
    }
    assert.equal(await xamanRequestsOf(uuid), 0)
    for (let i = 0; i < 5; i++) assert.equal((await startXaman(uuid)).statusCode, 200)
  })

  it('a place reserved by an instance that stopped while asking Xaman is taken back after a minute', async () => {
    const uuid = await create({ type: 'connect' })
    // Five starts that reserved their place and never came back (their instance stopped while Xaman was asked).
    for (let i = 0; i < 5; i++) {
      const reserved = await xamanSignRequestsRepository.reserve(t.service.ctx.storage.db, dialect, {
        payloadUuid: uuid,
        nowMs: t.clock.now(),
        max: 5,
      })
      assert.ok(reserved)
    }
    assert.equal((await startXaman(uuid)).statusCode, 429, 'a start under way still holds its place')
    t.clock.advance(RESERVATION_LAPSES_AFTER_MS)
    assert.equal((await startXaman(uuid)).statusCode, 200)
    assert.equal(await xamanRequestsOf(uuid), 1, 'the lapsed places are gone')
  })

  it('Xaman unreachable: 502 on creating, and the page still reads the request', async () => {
    const { uuid } = await started({ type: 'connect' })
    xaman.setDown(true)
    try {
      const response = await startXaman(uuid)
      assert.equal(response.statusCode, 502)
      assert.match(response.json().error, /Xaman refused the request: status 503/)
      assert.equal((await pagePoll(uuid)).status, 'pending')
    } finally {
      xaman.setDown(false)
    }
  })

  it('a hostile Xaman answer is a 502, and nothing is kept of it: too large, a uuid given before, a link that is not https', async () => {
    const earlier = await started({ type: 'connect' })
    const uuid = await create({ type: 'connect' })
    const links = (id: string) => ({
      next: { always: `https://xumm.app/sign/${id}` },
      refs: { qr_png: `https://xumm.app/sign/${id}_q.png` },
    })
    for (const [answer, said] of [
      [JSON.stringify({ uuid: randomUUID(), ...links('x'), padding: 'a'.repeat(MAX_XAMAN_ANSWER_BYTES) }), /with more than 262144 bytes/],
      [JSON.stringify({ uuid: earlier.xamanUuid, ...links(earlier.xamanUuid) }), /a sign request it had given before/],
      [JSON.stringify({ uuid: earlier.xamanUuid.toUpperCase(), ...links(earlier.xamanUuid) }), /a sign request it had given before/],
      [JSON.stringify({ uuid: randomUUID(), next: { always: 'https://user:pw@xumm.app/sign/x' }, refs: links('x').refs }), /lacks uuid/],
      [JSON.stringify({ uuid: 'not-a-uuid/../..', ...links('x') }), /its uuid is not a UUID/],
      [JSON.stringify({ uuid: randomUUID(), next: { always: 'javascript:alert(1)' }, refs: links('x').refs }), /lacks uuid, next.always/],
    ] as const) {
      xaman.answerNextCallWith(answer)
      const response = await startXaman(uuid)
      assert.equal(response.statusCode, 502, response.body)
      assert.match(response.json().error, said)
    }
    assert.equal(await xamanRequestsOf(uuid), 0, 'no sign request kept for the payload')
    assert.equal(await xamanRequestsOf(earlier.uuid), 1, "the earlier payload's request is its own still")
  })

  it('a Xaman answer too large to be one, while the worker reads a request, is a look that failed: read again later', async () => {
    const wallet = Wallet.generate()
    const { uuid, xamanUuid } = await started({ type: 'connect' })
    xaman.answerNextCallWith(
      JSON.stringify({ meta: { signed: true, resolved: true }, padding: 'a'.repeat(MAX_XAMAN_ANSWER_BYTES) }),
      xamanUuid,
    )
    assert.equal((await pagePoll(uuid)).status, 'pending')
    xaman.sign(xamanUuid, xamanSignIn(wallet), wallet.classicAddress)
    assert.equal((await pagePoll(uuid)).status, 'signed')
  })

  it('acting on a resolved request is refused before Xaman is asked', async () => {
    const uuid = await create({ type: 'connect' })
    await t.inject({ method: 'POST', url: `/api/v1/sign/${uuid}/reject`, payload: {} })
    const count = xaman.created.length
    assert.equal((await startXaman(uuid)).statusCode, 409)
    assert.equal(xaman.created.length, count)
  })

  it('every open Xaman request has its turn, however many newer ones wait (each look moves a request to the back)', async () => {
    const wallet = Wallet.generate()
    const oldest = await started({ type: 'connect' })
    xaman.sign(oldest.xamanUuid, xamanSignIn(wallet), wallet.classicAddress)
    const newer: string[] = []
    for (let payload = 0; payload < 20; payload++) {
      const uuid = await create({ type: 'connect' })
      for (let request = 0; request < 3; request++) {
        t.clock.advance(1)
        assert.equal((await startXaman(uuid)).statusCode, 200)
        newer.push((xaman.created.at(-1) as { uuid: string }).uuid)
      }
    }
    // Each round is a run after the last one's looks took their 2 seconds: every request is due again by then.
    for (let round = 0; round < 10 && (await appView(oldest.uuid)).status === 'pending'; round++) {
      t.clock.advance(XAMAN_CHECK_INTERVAL_MS)
      await t.service.ctx.signing.xamanOutcomes.checkDue()
    }
    assert.equal((await appView(oldest.uuid)).status, 'signed', 'the oldest request was read and applied')
    // The 60 newer requests expire in Xaman, so that they are settled and the worker has nothing left to read.
    for (const xamanUuid of newer) xaman.expire(xamanUuid)
    t.clock.advance(XAMAN_CHECK_INTERVAL_MS)
    await lookAtAllDue()
  })
})

describe('Xaman not configured', () => {
  let t: TestService
  before(async () => {
    t = await startTestService('sqlite')
  })
  after(() => t.stop())

  it('has no Xaman route and does not offer Xaman', async () => {
    const { apiKey } = await t.createProject()
    const uuid = await createPayload(t, apiKey, { type: 'connect' })
    assert.equal((await t.inject({ method: 'POST', url: `/api/v1/sign/${uuid}/xaman`, payload: {} })).statusCode, 404)
    assert.equal((await t.inject({ method: 'GET', url: `/api/v1/sign/${uuid}` })).json().wallets.xaman, false)
  })
})
