import assert from 'node:assert/strict'
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { Wallet } from 'xrpl'
import { FOLLOW_INTERVAL_MS } from '../../../src/features/signing/transaction-follower.js'
import { WebhookDispatcher } from '../../../src/features/webhooks/dispatcher/webhook-dispatcher.js'
import { ManualClock } from '../../../src/platform/clock.js'
import { paymentTransaction } from '../../../test/support/fixtures.js'
import { type RippledDouble, startRippledDouble } from '../../../test/support/rippled-double.js'
import { startTestService, type TestService } from '../../../test/support/service.js'
import { signRequested } from '../../../test/support/wallet-signing.js'
import { dispatchAll } from '../../../test/support/webhooks.js'
import { createWebhookReceiver, describeDelivery } from '../examples/webhook-receiver.js'
import { ConflictError, Countersign, CountersignError, type WebhookDelivery } from '../src/index.js'

describe('@countersign/sdk against a running service', () => {
  let t: TestService
  let pro: Countersign
  let free: Countersign
  let proApiKey: string
  let freeApiKey: string

  before(async () => {
    t = await startTestService('sqlite', {
      listen: true,
      // Deliveries are verified against the real time (a timestamp within 5 minutes), so the test clock starts there.
      clock: new ManualClock(Date.now()),
      // The Free plan here allows no live stream, so that waitForResolution has to poll, and no poll interval, so that
      // polls are not refused while the test clock stands still.
      env: { LIMITS_FREE: JSON.stringify({ maxLiveStreams: 0, minPollIntervalMs: 0 }) },
    })
    proApiKey = (await t.createProject('pro', 'Example Shop')).apiKey
    pro = new Countersign({ apiKey: proApiKey, baseUrl: t.url })
    freeApiKey = (await t.createProject('free')).apiKey
    free = new Countersign({ apiKey: freeApiKey, baseUrl: t.url })
  })
  after(() => t.stop())

  const reject = async (uuid: string) => {
    const response = await fetch(`${t.url}/api/v1/sign/${uuid}/reject`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ walletAdapter: 'gemwallet' }),
    })
    assert.equal(response.status, 200)
  }

  describe('payloads', () => {
    it('creates, reads, lists and cancels', async () => {
      const created = await pro.payloads.create({ type: 'signMessage', message: 'Log in to Example Shop' })
      assert.equal(created.status, 'pending')
      assert.equal(created.signingUrl, `http://countersign.test/sign/${created.uuid}`)

      const read = await pro.payloads.get(created.uuid)
      assert.equal(read.uuid, created.uuid)
      assert.equal(read.type, 'signMessage')
      assert.equal(read.signerAddress, null)

      const listed = await pro.payloads.list({ limit: 5, status: 'pending' })
      assert.equal(listed.limit, 5)
      assert.ok(listed.payloads.some((p) => p.uuid === created.uuid))

      assert.deepEqual(await pro.payloads.cancel(created.uuid), { uuid: created.uuid, status: 'expired' })
      const again = await pro.payloads.cancel(created.uuid).catch((error: unknown) => error)
      assert.ok(again instanceof CountersignError)
      assert.equal(again.status, 409)
      assert.equal(again.message, 'Payload is already expired')
    })

    it('throws a CountersignError carrying the status, message and field details', async () => {
      const error = await pro.payloads.create({ type: 'sign' }).catch((e: unknown) => e)
      assert.ok(error instanceof CountersignError)
      assert.equal(error.status, 422)
      assert.deepEqual(
        error.details?.map((d) => d.field),
        ['transaction'],
      )
      // The message says what to fix, not only that validation failed; the request id finds the service's log line.
      assert.equal(error.message, `Validation failed: transaction ${error.details?.[0]?.message}`)
      assert.match(error.requestId ?? '', /^\S+$/)
      const several = await pro.payloads
        .create({ type: 'signMessage', message: 'x', options: { expiresIn: 0, colour: 'red' } as never })
        .catch((e: unknown) => e)
      assert.ok(several instanceof CountersignError)
      assert.match(several.message, /^Validation failed: options\.\S+ .+ \(and 1 more in details\)$/)
      const missing = await pro.payloads.get('00000000-0000-4000-8000-000000000000').catch((e: unknown) => e)
      assert.ok(missing instanceof CountersignError)
      assert.equal(missing.status, 404)
      const wrongKey = new Countersign({ apiKey: 'cs_live_not_a_key', baseUrl: t.url })
      const unauthorized = await wrongKey.payloads.list().catch((e: unknown) => e)
      assert.ok(unauthorized instanceof CountersignError)
      assert.equal(unauthorized.status, 401)
    })

    it('waits out a 429 for its Retry-After and sends again; throws it when retries are spent', async () => {
      const { uuid } = await pro.payloads.create({ type: 'connect' })
      await pro.payloads.get(uuid)
      // The Pro plan allows a GET of one payload a second; the service's clock moves a second while the client waits.
      const moveClock = setTimeout(() => t.clock.advance(1000), 300)
      const started = Date.now()
      const read = await pro.payloads.get(uuid)
      clearTimeout(moveClock)
      assert.equal(read.uuid, uuid)
      assert.ok(Date.now() - started >= 1000, 'the client waited the Retry-After second')

      const impatient = new Countersign({ apiKey: (await t.createProject('pro')).apiKey, baseUrl: t.url, maxRetries: 0 })
      const mine = await impatient.payloads.create({ type: 'connect' })
      await impatient.payloads.get(mine.uuid)
      const refused = await impatient.payloads.get(mine.uuid).catch((e: unknown) => e)
      assert.ok(refused instanceof CountersignError)
      assert.equal(refused.status, 429)
      assert.equal(refused.retryAfterSeconds, 1)
    })
  })

  describe('listAll', () => {
    it("pages through a project's payloads, newest first, until the service says none follow", async () => {
      const { apiKey } = await t.createProject('pro')
      const client = new Countersign({ apiKey, baseUrl: t.url })
      const created: string[] = []
      for (let i = 0; i < 5; i++) {
        t.clock.advance(10)
        created.push((await client.payloads.create({ type: 'connect' })).uuid)
      }
      const calls: string[] = []
      const counting = new Countersign({ apiKey, baseUrl: t.url, fetch: recordingFetch(calls) })
      const seen: string[] = []
      for await (const payload of counting.payloads.listAll({ limit: 2, type: 'connect' })) {
        seen.push(payload.uuid)
        if (seen.length === 1) {
          t.clock.advance(10)
          await client.payloads.create({ type: 'connect' })
        }
      }
      assert.deepEqual(seen, [...created].reverse(), 'a payload created meanwhile neither repeats nor moves an item')
      assert.equal(calls.length, 3, 'pages of 2, 2 and 1')
      assert.match(calls[1] as string, new RegExp(`after=${created[3]}`), 'the next page starts after the last uuid seen')
      const exact: string[] = []
      for await (const payload of counting.payloads.listAll({ limit: 6 })) exact.push(payload.uuid)
      assert.equal(exact.length, 6)
      assert.equal(calls.length, 4, 'a full last page says no more follow: no empty page is asked for')
    })
  })

  describe('externalId', () => {
    it('finds a payload by its externalId, and names the existing payload in the ConflictError of a second one', async () => {
      const first = await pro.payloads.create({ type: 'connect', options: { externalId: 'order-7', metadata: { cart: 3 } } })
      const conflict = await pro.payloads.create({ type: 'connect', options: { externalId: 'order-7' } }).catch((e: unknown) => e)
      assert.ok(conflict instanceof ConflictError)
      assert.equal(conflict.status, 409)
      assert.equal(conflict.uuid, first.uuid)
      const { payloads } = await pro.payloads.list({ externalId: 'order-7' })
      assert.deepEqual(
        payloads.map((p) => [p.uuid, p.externalId, p.metadata]),
        [[first.uuid, 'order-7', { cart: 3 }]],
      )
    })
  })

  describe('events', () => {
    it("yields the payload's current state, then each change, and ends once it is resolved", async () => {
      const { uuid } = await pro.payloads.create({ type: 'connect' })
      const states: string[] = []
      for await (const payload of pro.payloads.events(uuid)) {
        assert.equal(payload.uuid, uuid)
        states.push(payload.status)
        if (payload.status === 'pending') await reject(uuid)
      }
      assert.deepEqual(states, ['pending', 'rejected'])
    })
  })

  describe('waitForResolution', () => {
    it('follows the live stream to the outcome', async () => {
      const { uuid } = await pro.payloads.create({ type: 'sign', transaction: paymentTransaction() })
      const calls: string[] = []
      const watcher = new Countersign({ apiKey: proApiKey, baseUrl: t.url, fetch: recordingFetch(calls) })
      const waiting = watcher.payloads.waitForResolution(uuid)
      setTimeout(() => void reject(uuid), 200)
      const resolved = await waiting
      assert.equal(resolved.status, 'rejected')
      assert.equal(resolved.walletAdapter, 'gemwallet')
      // The outcome came by the stream: no poll of the payload was needed.
      assert.ok(calls.length > 0)
      assert.deepEqual(
        calls.filter((call) => call !== `GET /api/v1/payloads/${uuid}/events`),
        [],
      )
    })

    it('polls when the project may not open a live stream', async () => {
      const { uuid } = await free.payloads.create({ type: 'signMessage', message: 'hi' })
      const waiting = free.payloads.waitForResolution(uuid, { pollIntervalMs: 50 })
      setTimeout(() => void reject(uuid), 200)
      assert.equal((await waiting).status, 'rejected')
    })

    it('stops when its signal aborts', async () => {
      const { uuid } = await pro.payloads.create({ type: 'connect' })
      const controller = new AbortController()
      const waiting = pro.payloads.waitForResolution(uuid, { signal: controller.signal })
      setTimeout(() => controller.abort(), 200)
      await assert.rejects(waiting, (error: Error) => error.name === 'AbortError')
    })
  })

  describe('webhooks', () => {
    it('creates, lists and deletes; the Free plan is refused with 403', async () => {
      // An address, not a name: a host that does not resolve is refused even where private targets are allowed.
      const created = await pro.webhooks.create({ url: 'https://127.0.0.1:8443/countersign', events: ['payload.signed'] })
      assert.match(created.id, /^wh_/)
      assert.match(created.secret, /^whsec_/)
      const listed = await pro.webhooks.list()
      assert.deepEqual(
        listed.map((w) => [w.id, w.url, w.events]),
        [[created.id, 'https://127.0.0.1:8443/countersign', ['payload.signed']]],
      )
      assert.deepEqual(await pro.webhooks.delete(created.id), { id: created.id, deleted: true })
      assert.deepEqual(await pro.webhooks.list(), [])

      const refused = await free.webhooks.list().catch((e: unknown) => e)
      assert.ok(refused instanceof CountersignError)
      assert.equal(refused.status, 403)
    })

    /** The example receiver behind a new webhook: what it received, and each delivery as the example describes it. */
    const withReceiver = async (
      use: (receiver: { url: string; webhookId: string; received: Array<{ delivery: WebhookDelivery; line: string }> }) => Promise<void>,
    ) => {
      const received: Array<{ delivery: WebhookDelivery; line: string }> = []
      let secret = ''
      // The secret is known only once the webhook exists, which needs the receiver's address first.
      const server = createWebhookReceiver(
        () => secret,
        (delivery, deliveryId) => received.push({ delivery, line: describeDelivery(delivery, deliveryId) }),
      )
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
      try {
        const webhook = await pro.webhooks.create({ url })
        secret = webhook.secret
        await use({ url, webhookId: webhook.id, received })
        await pro.webhooks.delete(webhook.id)
      } finally {
        await new Promise((resolve) => server.close(resolve))
      }
    }

    it('the example receiver accepts a real delivery and refuses a forged one', async () => {
      await withReceiver(async ({ url, received }) => {
        const { uuid } = await pro.payloads.create({ type: 'connect' })
        await reject(uuid)
        await dispatchAll(new WebhookDispatcher(t.service.ctx, { random: () => 0.5 }))
        assert.equal(received.length, 1)
        const delivery = received[0]?.delivery
        assert.ok(delivery?.event === 'payload.rejected')
        assert.equal(delivery.payload.uuid, uuid)
        assert.match(received[0]?.line ?? '', new RegExp(`^dlv_\\S+ payload\\.rejected: payload ${uuid} is rejected$`))

        const forged = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'webhook-id': 'dlv_forged',
            'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
            'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}`,
          },
          body: JSON.stringify({ event: 'payload.signed', payload: { uuid } }),
        })
        assert.equal(forged.status, 401)
        assert.equal(received.length, 1)
      })
    })

    it('the example receiver takes a test event, which has no payload', async () => {
      await withReceiver(async ({ webhookId, received }) => {
        const response = await fetch(`${t.url}/api/v1/webhooks/${webhookId}/test`, {
          method: 'POST',
          headers: { authorization: `Bearer ${proApiKey}` },
        })
        assert.equal(response.status, 202)
        await dispatchAll(new WebhookDispatcher(t.service.ctx, { random: () => 0.5 }))
        assert.equal(received.length, 1)
        const expected: WebhookDelivery = { event: 'webhook.test', webhookId, createdAt: new Date(t.clock.now()).toISOString() }
        assert.deepEqual(received[0]?.delivery, expected)
        assert.match(received[0]?.line ?? '', new RegExp(`^dlv_\\S+ test event from webhook ${webhookId}$`))
      })
    })
  })
})

describe('@countersign/sdk when the connection drops', () => {
  let t: TestService
  let proxy: Server
  const links = new Set<Socket>()

  before(async () => {
    t = await startTestService('sqlite', { listen: true })
    const target = new URL(t.url)
    // A TCP relay between client and service: cutting its sockets is a dropped connection, as a proxy restart makes.
    proxy = createServer((client) => {
      const upstream = connect(Number(target.port), target.hostname)
      links.add(client).add(upstream)
      client.pipe(upstream).pipe(client)
      const forget = () => {
        client.destroy()
        upstream.destroy()
        links.delete(client)
        links.delete(upstream)
      }
      client.on('error', forget).on('close', forget)
      upstream.on('error', forget).on('close', forget)
    })
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  })
  after(async () => {
    for (const socket of links) socket.destroy()
    await new Promise((resolve) => proxy.close(resolve))
    await t.stop()
  })

  it('waitForResolution reconnects to the live stream and still learns the outcome', async () => {
    const { apiKey } = await t.createProject('pro')
    const calls: string[] = []
    const client = new Countersign({
      apiKey,
      baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
      fetch: recordingFetch(calls),
    })
    const { uuid } = await client.payloads.create({ type: 'connect' })
    const waiting = client.payloads.waitForResolution(uuid)
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.ok(links.size > 0, 'the stream is open through the relay')
    for (const socket of links) socket.destroy()
    await new Promise((resolve) => setTimeout(resolve, 100))
    const response = await fetch(`${t.url}/api/v1/sign/${uuid}/reject`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ walletAdapter: 'gemwallet' }),
    })
    assert.equal(response.status, 200)
    assert.equal((await waiting).status, 'rejected')
    // Learned by a second stream, not by falling back to polling the payload.
    const streams = calls.filter((call) => call === `GET /api/v1/payloads/${uuid}/events`)
    assert.ok(streams.length >= 2, `${streams.length} stream connection(s)`)
    assert.deepEqual(
      calls.filter((call) => !streams.includes(call)),
      ['POST /api/v1/payloads'],
    )
  })
})

describe('@countersign/sdk: waitForOutcome, against a service that submits to a node', () => {
  let t: TestService
  let rippled: RippledDouble
  let client: Countersign

  before(async () => {
    rippled = await startRippledDouble()
    rippled.setValidatedLedgerIndex(1000)
    t = await startTestService('sqlite', { listen: true, env: { XRPL_NODE_URL: rippled.url } })
    client = new Countersign({ apiKey: (await t.createProject('pro')).apiKey, baseUrl: t.url })
  })
  after(async () => {
    await t.stop()
    await rippled.close()
  })

  it("waits past signed (submitted) to the ledger's final outcome of a signAndSubmit payment", async () => {
    const { uuid } = await client.payloads.create({ type: 'signAndSubmit', transaction: paymentTransaction() })
    const outcome = client.payloads.waitForOutcome(uuid)
    let final = false
    void outcome.then(() => {
      final = true
    })
    const signed = signRequested(Wallet.generate(), paymentTransaction())
    const approved = await fetch(`${t.url}/api/v1/sign/${uuid}/approve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ walletAdapter: 'gemwallet', signedTransaction: signed.tx_blob }),
    })
    assert.equal(approved.status, 200)
    // Signed means submitted: waitForResolution stops there, with no outcome yet; waitForOutcome does not.
    const resolved = await client.payloads.waitForResolution(uuid)
    assert.equal(resolved.status, 'signed')
    assert.equal(resolved.submission?.outcome, null)
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.equal(final, false, 'not final while the ledger has not decided')

    rippled.setTransaction(signed.hash, { validated: true, ledgerIndex: 1003, transactionResult: 'tecUNFUNDED_PAYMENT' })
    rippled.setValidatedLedgerIndex(1003)
    for (let i = 0; i < 3 && !final; i++) {
      t.clock.advance(FOLLOW_INTERVAL_MS)
      await t.service.ctx.follower.followDue()
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const decided = await outcome
    assert.equal(decided.status, 'signed')
    assert.equal(decided.submission?.outcome, 'failed', 'a tec: signed and submitted, and no payment made')
    assert.equal(decided.submission?.validatedResult, 'tecUNFUNDED_PAYMENT')
    // Already final: it answers at once.
    assert.equal((await client.payloads.waitForOutcome(uuid)).submission?.outcome, 'failed')
  })
})

/** The global fetch, recording each request as "METHOD /path", so that a test can tell streaming from polling. */
function recordingFetch(calls: string[]): typeof fetch {
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input)
    calls.push(`${init?.method ?? 'GET'} ${url.pathname}${url.search}`)
    return fetch(input, init)
  }
}
