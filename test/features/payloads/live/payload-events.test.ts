import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { SIGN_REQUESTS_PER_MINUTE } from '../../../../src/features/signing/routes.js'
import { forEachDatabase } from '../../../support/databases.js'
import { paymentTransaction } from '../../../support/fixtures.js'
import { createPayload, readPayload } from '../../../support/payloads.js'
import { bearer, startTestService, type TestService } from '../../../support/service.js'
import { openSse, type SseStream } from '../../../support/sse.js'

const HEARTBEAT_MS = 100

forEachDatabase('live status (Server-Sent Events)', (dialect) => {
  let t: TestService
  let pro: string
  let free: string

  before(async () => {
    t = await startTestService(dialect, {
      listen: true,
      // TRUST_PROXY: the tests speak for clients at other addresses through X-Forwarded-For.
      env: { LIVE_HEARTBEAT_MS: String(HEARTBEAT_MS), LIMITS_FREE: JSON.stringify({ maxLiveStreams: 2 }), TRUST_PROXY: '127.0.0.1' },
    })
    ;({ apiKey: pro } = await t.createProject('pro', 'Example Shop'))
    ;({ apiKey: free } = await t.createProject('free'))
  })
  after(() => t.stop())

  const create = (apiKey: string, body: object = { type: 'sign', transaction: paymentTransaction() }) => createPayload(t, apiKey, body)
  const reject = async (uuid: string) => {
    const response = await t.inject({ method: 'POST', url: `/api/v1/sign/${uuid}/reject`, payload: { walletAdapter: 'gemwallet' } })
    assert.equal(response.statusCode, 200, response.body)
  }
  // 3 s: the Free plan's poll interval, so that both plans' reads in a row are let through.
  const appView = (apiKey: string, uuid: string) => readPayload(t, apiKey, uuid, 3000)
  const payloadStream = (apiKey: string, uuid: string) => openSse(`${t.url}/api/v1/payloads/${uuid}/events`, bearer(apiKey))
  const expectEnd = async (stream: SseStream) => {
    for (;;) {
      const item = await stream.next()
      if (item.kind === 'end') return
      assert.equal(item.kind, 'comment', 'nothing but heartbeats may follow the resolution')
    }
  }

  describe('GET /payloads/{uuid}/events', () => {
    it('sends the current state, then the change, then ends', async () => {
      const uuid = await create(pro)
      const stream = await payloadStream(pro, uuid)
      assert.equal(stream.response.status, 200)
      assert.equal(stream.response.headers.get('content-type'), 'text/event-stream; charset=utf-8')
      assert.equal(stream.response.headers.get('x-accel-buffering'), 'no')
      assert.equal(stream.response.headers.get('cache-control'), 'no-store')
      assert.deepEqual(await stream.nextData(), await appView(pro, uuid))

      await reject(uuid)
      const resolved = (await stream.nextData()) as { status: string; walletAdapter: string; resolvedAt: string }
      assert.deepEqual(resolved, await appView(pro, uuid))
      assert.equal(resolved.status, 'rejected')
      await expectEnd(stream)
    })

    it('sends a resolved payload once and ends at once', async () => {
      const uuid = await create(pro)
      await reject(uuid)
      const stream = await payloadStream(pro, uuid)
      assert.equal(((await stream.nextData()) as { status: string }).status, 'rejected')
      await expectEnd(stream)
    })

    it('ends with the expired state when the payload runs out of time', async () => {
      const uuid = await create(pro, { type: 'signMessage', message: 'hello', options: { expiresIn: 1 } })
      const stream = await payloadStream(pro, uuid)
      assert.equal(((await stream.nextData()) as { status: string }).status, 'pending')
      t.clock.advance(1000)
      const expired = (await stream.nextData(4000)) as { status: string; resolvedAt: string }
      assert.equal(expired.status, 'expired')
      assert.equal(expired.resolvedAt, new Date(t.clock.now()).toISOString())
      await expectEnd(stream)
    })

    it('keeps a quiet stream alive with heartbeat comments', async () => {
      const uuid = await create(pro)
      const stream = await payloadStream(pro, uuid)
      await stream.nextData()
      const started = Date.now()
      assert.deepEqual(await stream.next(HEARTBEAT_MS * 10), { kind: 'comment', text: 'heartbeat' })
      assert.deepEqual(await stream.next(HEARTBEAT_MS * 10), { kind: 'comment', text: 'heartbeat' })
      assert.ok(Date.now() - started >= HEARTBEAT_MS, 'heartbeats are spaced by the configured interval')
      stream.close()
    })

    it('counts the opening request once against the request rate, however long the stream stays open', async () => {
      const { apiKey } = await t.createProject('free')
      const uuid = await create(apiKey)
      const stream = await payloadStream(apiKey, uuid)
      assert.equal(stream.response.headers.get('x-ratelimit-remaining'), '18')
      await stream.nextData()
      await stream.next(HEARTBEAT_MS * 10)
      await stream.next(HEARTBEAT_MS * 10)
      const after = await t.inject({ method: 'GET', url: '/api/v1/payloads', headers: bearer(apiKey) })
      assert.equal(after.headers['x-ratelimit-remaining'], '17')
      stream.close()
    })

    it("caps a project's open streams at its plan's maxLiveStreams, and frees a slot when a stream closes", async () => {
      const uuids = [await create(free), await create(free), await create(free)]
      const first = await payloadStream(free, uuids[0] as string)
      const second = await payloadStream(free, uuids[1] as string)
      await Promise.all([first.nextData(), second.nextData()])

      const refused = await fetch(`${t.url}/api/v1/payloads/${uuids[2]}/events`, { headers: bearer(free) })
      assert.equal(refused.status, 429)
      assert.match(((await refused.json()) as { error: string }).error, /Free plan allows 2 open at once/)
      assert.ok(Number(refused.headers.get('retry-after')) > 0)

      first.close()
      let third: SseStream | undefined
      for (let attempt = 0; attempt < 50 && third === undefined; attempt++) {
        const stream = await payloadStream(free, uuids[2] as string)
        if (stream.response.status === 200) third = stream
        else await new Promise((resolve) => setTimeout(resolve, 20))
      }
      assert.ok(third, 'a closed stream gives its slot back')
      await third.nextData()
      third.close()
      second.close()
    })

    it("refuses another project's payload, an unknown one, and a missing key", async () => {
      const uuid = await create(pro)
      // A project of its own: the Free project's stream slots may still be closing after the cap test.
      const { apiKey: stranger } = await t.createProject('free', 'Another shop')
      const other = await fetch(`${t.url}/api/v1/payloads/${uuid}/events`, { headers: bearer(stranger) })
      assert.equal(other.status, 404)
      const unknown = await fetch(`${t.url}/api/v1/payloads/00000000-0000-4000-8000-000000000000/events`, { headers: bearer(pro) })
      assert.equal(unknown.status, 404)
      const anonymous = await fetch(`${t.url}/api/v1/payloads/${uuid}/events`)
      assert.equal(anonymous.status, 401)
    })
  })

  it('answers HEAD on either stream at once with the stream’s headers, holding no connection and no slot', async () => {
    const uuid = await create(pro)
    const streams = [
      { url: `${t.url}/api/v1/sign/${uuid}/events`, headers: {} },
      { url: `${t.url}/api/v1/payloads/${uuid}/events`, headers: bearer(pro) },
    ]
    for (const { url, headers } of streams) {
      // More HEADs than the signing page's 5 streams a payload: a HEAD held open until the payload ended took a slot each.
      for (let i = 0; i < 6; i++) {
        const head = await fetch(url, { method: 'HEAD', headers, signal: AbortSignal.timeout(10_000) })
        assert.equal(head.status, 200)
        assert.equal(head.headers.get('content-type'), 'text/event-stream; charset=utf-8')
      }
      const unknown = await fetch(url.replace(uuid, '00000000-0000-4000-8000-000000000000'), { method: 'HEAD', headers })
      assert.equal(unknown.status, 404)
    }
    const stream = await openSse(`${t.url}/api/v1/sign/${uuid}/events`)
    assert.equal(stream.response.status, 200, 'the HEADs took no slot')
    await stream.nextData()
    stream.close()
  })

  describe('GET /sign/{uuid}/events', () => {
    it('sends what GET /sign/{uuid} shows, then the change, then ends', async () => {
      const uuid = await create(pro, {
        type: 'sign',
        transaction: paymentTransaction(),
        options: { returnUrl: 'https://shop.example/done' },
      })
      const stream = await openSse(`${t.url}/api/v1/sign/${uuid}/events`)
      assert.equal(stream.response.status, 200)
      const page = async () => (await t.inject({ method: 'GET', url: `/api/v1/sign/${uuid}` })).json()
      assert.deepEqual(await stream.nextData(), await page())

      await reject(uuid)
      const resolved = (await stream.nextData()) as { status: string; redirectUrl: string }
      assert.deepEqual(resolved, await page())
      assert.equal(resolved.status, 'rejected')
      assert.equal(resolved.redirectUrl, 'https://shop.example/done')
      await expectEnd(stream)
    })

    it('caps the signing-page streams one client address holds open, and no one else is shut out by them', async () => {
      // Anyone with signing links (or a key to make them) held any number open before: 750 on a Pro project.
      const attacker = { 'x-forwarded-for': '198.51.100.7' }
      const uuids = await Promise.all(Array.from({ length: 5 }, () => create(pro)))
      const held: SseStream[] = []
      for (const uuid of uuids.slice(0, 4)) {
        for (let i = 0; i < 5; i++) held.push(await openSse(`${t.url}/api/v1/sign/${uuid}/events`, attacker))
      }
      assert.deepEqual(new Set(held.map((stream) => stream.response.status)), new Set([200]))
      const refused = await fetch(`${t.url}/api/v1/sign/${uuids[4]}/events`, { headers: attacker })
      assert.equal(refused.status, 429)
      assert.match(
        ((await refused.json()) as { error: string }).error,
        /Too many live streams from this address: at most 20 signing pages open at once/,
      )
      // Another user of the same project, at another address, is not shut out; nor is the application's own stream.
      const user = await openSse(`${t.url}/api/v1/sign/${uuids[4]}/events`, { 'x-forwarded-for': '203.0.113.9' })
      assert.equal(user.response.status, 200)
      const app = await payloadStream(pro, uuids[4] as string)
      assert.equal(app.response.status, 200)
      user.close()
      app.close()
      // A closed page gives its slot back.
      held.pop()?.close()
      let again: SseStream | undefined
      for (let attempt = 0; attempt < 50 && again === undefined; attempt++) {
        const stream = await openSse(`${t.url}/api/v1/sign/${uuids[4]}/events`, attacker)
        if (stream.response.status === 200) again = stream
        else await new Promise((resolve) => setTimeout(resolve, 20))
      }
      assert.ok(again, 'a closed page gives its slot back')
      again.close()
      for (const stream of held) stream.close()
    })

    it('answers 404 for an unknown or malformed uuid', async () => {
      assert.equal((await fetch(`${t.url}/api/v1/sign/00000000-0000-4000-8000-000000000000/events`)).status, 404)
      assert.equal((await fetch(`${t.url}/api/v1/sign/not-a-uuid/events`)).status, 404)
    })

    it("is refused once the payload's wallet-facing request budget is used up by GET /sign/{uuid}", async () => {
      const uuid = await create(pro)
      for (let i = 0; i < SIGN_REQUESTS_PER_MINUTE; i++) {
        assert.equal((await t.inject({ method: 'GET', url: `/api/v1/sign/${uuid}` })).statusCode, 200)
      }
      const refused = await fetch(`${t.url}/api/v1/sign/${uuid.toUpperCase()}/events`)
      assert.equal(refused.status, 429)
      assert.equal(
        ((await refused.json()) as { error: string }).error,
        `Too many requests for this signing request: at most ${SIGN_REQUESTS_PER_MINUTE} a minute; retry in 60 s`,
      )
      assert.equal(refused.headers.get('retry-after'), '60')
    })
  })
})

forEachDatabase('live status on shutdown', (dialect) => {
  it('ends open streams so that stopping the service is not held up', async () => {
    const t = await startTestService(dialect, { listen: true })
    const { apiKey } = await t.createProject('pro')
    const created = await t.inject({
      method: 'POST',
      url: '/api/v1/payloads',
      headers: bearer(apiKey),
      payload: { type: 'signMessage', message: 'hi' },
    })
    const uuid = created.json().uuid as string
    const stream = await openSse(`${t.url}/api/v1/payloads/${uuid}/events`, bearer(apiKey))
    const signStream = await openSse(`${t.url}/api/v1/sign/${uuid}/events`)
    await Promise.all([stream.nextData(), signStream.nextData()])
    const started = Date.now()
    await t.stop()
    assert.ok(Date.now() - started < 5000, 'stop() finished without waiting on the streams')
    assert.deepEqual(await stream.next(), { kind: 'end' })
    assert.deepEqual(await signStream.next(), { kind: 'end' })
  })
})
