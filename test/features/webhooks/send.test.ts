import assert from 'node:assert/strict'
import net from 'node:net'
import { after, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { fetchPublicText } from '../../../src/features/webhooks/fetch-public-text.js'
import { sendWebhook, type WebhookRequest } from '../../../src/features/webhooks/send.js'
import { signWebhookBody, webhookSigningKey } from '../../../src/features/webhooks/signature.js'
import {
  answer,
  hang,
  hasValidSignature,
  type ReceivedRequest,
  type Responder,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../../support/webhook-receiver.js'

const receivers: WebhookReceiver[] = []
after(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()))
})

/** Starts a receiver that is closed once every test of this file has run. */
async function startReceiver(responder: Responder): Promise<WebhookReceiver> {
  const receiver = await startWebhookReceiver(responder)
  receivers.push(receiver)
  return receiver
}

const body = JSON.stringify({ event: 'payload.signed', payload: { uuid: '0b6f0c9e-7d3e-4a53-8f1c-2b9a1d5e4c10', memo: 'naïve ✓' } })

/**
 * 10 s: a loaded two-core machine running the whole suite once took over 2 s to complete a request to a receiver that
 * answers at once (CI, 2 runtime lines of 3). The tests of the timeout give their own.
 */
function request(url: string, overrides: Partial<WebhookRequest> = {}): WebhookRequest {
  return { url, body, headers: {}, timeoutMs: 10_000, allowPrivateTargets: true, ...overrides }
}

describe('sendWebhook', () => {
  it('succeeds on a 200, and the receiver gets exactly the body and headers sent', async () => {
    const receiver = await startReceiver(answer(200, {}, 'thanks'))
    const secret = 'whsec_receiver-test'
    const headers = {
      'X-Service-Signature': signWebhookBody(body, webhookSigningKey(secret)),
      'X-Countersign-Delivery': 'dlv_123',
      'X-Countersign-Timestamp': '1768478400',
      'X-Countersign-Event': 'payload.signed',
    }
    const result = await sendWebhook(request(receiver.url, { headers }))

    assert.deepEqual({ ...result, durationMs: 0 }, { ok: true, statusCode: 200, error: null, retryAfter: undefined, durationMs: 0 })
    assert.ok(result.durationMs > 0 && result.durationMs < 10_000)
    assert.equal(receiver.requests.length, 1)
    const [received] = receiver.requests as [ReceivedRequest]
    assert.equal(received.method, 'POST')
    assert.equal(received.path, '/hook')
    assert.ok(received.rawBody.equals(Buffer.from(body, 'utf8')))
    assert.equal(received.headers['content-type'], 'application/json')
    assert.equal(received.headers['content-length'], String(Buffer.byteLength(body)))
    assert.equal(received.headers['x-countersign-delivery'], 'dlv_123')
    assert.equal(received.headers['x-countersign-timestamp'], '1768478400')
    assert.equal(received.headers['x-countersign-event'], 'payload.signed')
    // The receiver's own check, over the raw bytes it got.
    assert.ok(hasValidSignature(received.rawBody, received.headers['x-service-signature'], secret))
  })

  it('counts any 2xx as success', async () => {
    const receiver = await startReceiver(answer(204))
    const result = await sendWebhook(request(receiver.url))
    assert.equal(result.ok, true)
    assert.equal(result.statusCode, 204)
  })

  it('fails on a 500, and on a 410 so that the caller can disable the webhook', async () => {
    const failing = await startReceiver(answer(500, {}, 'boom'))
    assert.deepEqual(
      { ...(await sendWebhook(request(failing.url))), durationMs: 0 },
      { ok: false, statusCode: 500, error: 'receiver answered HTTP 500', retryAfter: undefined, durationMs: 0 },
    )
    const gone = await startReceiver(answer(410))
    const result = await sendWebhook(request(gone.url))
    assert.equal(result.ok, false)
    assert.equal(result.statusCode, 410)
  })

  it('does not follow a redirect', async () => {
    const target = await startReceiver(answer(200))
    const redirecting = await startReceiver(answer(302, { location: target.url }))
    const result = await sendWebhook(request(redirecting.url))
    assert.equal(result.ok, false)
    assert.equal(result.statusCode, 302)
    assert.equal(result.error, `redirect to ${target.url} not followed`)
    await sleep(100)
    assert.equal(redirecting.requests.length, 1)
    assert.equal(target.requests.length, 0)
  })

  it("keeps 200 characters of a redirect's Location: a receiver cannot write 15 KB of its own into the delivery and its alert", async () => {
    const location = `https://elsewhere.example/${'Click-here-to-claim-your-prize-'.repeat(500)}`
    const redirecting = await startReceiver(answer(302, { location }))
    const result = await sendWebhook(request(redirecting.url))
    assert.equal(result.error, `redirect to ${location.slice(0, 200)}… not followed`)
  })

  it('gives up on a receiver that never answers when the time is up', async () => {
    const hanging = await startReceiver(hang)
    const result = await sendWebhook(request(hanging.url, { timeoutMs: 300 }))
    assert.equal(result.ok, false)
    assert.equal(result.statusCode, null)
    assert.equal(result.error, 'timed out after 300 ms')
    assert.ok(result.durationMs >= 290 && result.durationMs < 1500, String(result.durationMs))
    assert.equal(hanging.requests.length, 1)
  })

  it('surfaces Retry-After', async () => {
    const busy = await startReceiver(answer(503, { 'retry-after': '120' }))
    const result = await sendWebhook(request(busy.url))
    assert.equal(result.ok, false)
    assert.equal(result.statusCode, 503)
    assert.equal(result.retryAfter, '120')
    const limited = await startReceiver(answer(429, { 'retry-after': 'Thu, 15 Jan 2026 12:02:00 GMT' }))
    assert.equal((await sendWebhook(request(limited.url))).retryAfter, 'Thu, 15 Jan 2026 12:02:00 GMT')
  })

  it('reports a refused connection as a result', async () => {
    const closed = await startReceiver(answer(200))
    await closed.close()
    const result = await sendWebhook(request(closed.url))
    assert.equal(result.ok, false)
    assert.equal(result.statusCode, null)
    assert.match(result.error ?? '', /ECONNREFUSED/)
  })

  it('refuses a loopback target at connect time unless private targets are allowed', async () => {
    const receiver = await startReceiver(answer(200))
    const literal = await sendWebhook(request(receiver.url, { allowPrivateTargets: false }))
    assert.equal(literal.ok, false)
    assert.equal(literal.statusCode, null)
    assert.equal(literal.error, 'refused to connect to 127.0.0.1, a loopback address; webhook targets must be public')

    // By name, the address is only known once the socket resolves it: the check runs in the connection's lookup.
    const byName = await sendWebhook(request(receiver.url.replace('127.0.0.1', 'localhost'), { allowPrivateTargets: false }))
    assert.equal(byName.ok, false)
    assert.equal(byName.error, 'refused to connect to localhost: it does not resolve to a public address; webhook targets must be public')
    assert.equal(receiver.requests.length, 0)

    assert.equal((await sendWebhook(request(receiver.url, { allowPrivateTargets: true }))).ok, true)
    assert.equal(receiver.requests.length, 1)
  })

  it('refuses at connect time IPv6 literals that embed a private IPv4 address, and the receiver gets nothing', async () => {
    const receiver = await startReceiver(answer(200))
    const port = new URL(receiver.url).port
    for (const host of ['[::127.0.0.1]', '[64:ff9b::7f00:1]', '[2002:7f00:1::]']) {
      const result = await sendWebhook(request(`http://${host}:${port}/hook`, { allowPrivateTargets: false }))
      assert.equal(result.ok, false)
      assert.match(
        result.error ?? '',
        /^refused to connect to .*, an IPv6 address that embeds an IPv4 address; webhook targets must be public$/,
      )
    }
    assert.equal(receiver.requests.length, 0)
  })

  it('keeps a working connection after a large response, reading none of it beyond 64 KiB', async () => {
    const chatty = await startReceiver(answer(200, {}, 'x'.repeat(1024 * 1024)))
    assert.equal((await sendWebhook(request(chatty.url))).ok, true)
    assert.equal((await sendWebhook(request(chatty.url))).ok, true)
    assert.equal(chatty.requests.length, 2)
  })

  it('retries once on a fresh socket when a kept-alive socket was closed by the receiver', async () => {
    const served = new WeakSet<object>()
    const receiver = await startReceiver((_request, res) => {
      if (served.has(res.req.socket)) return res.req.socket.destroy()
      served.add(res.req.socket)
      res.end()
    })
    assert.equal((await sendWebhook(request(receiver.url))).ok, true)
    await sleep(50)
    const result = await sendWebhook(request(receiver.url))
    assert.equal(result.ok, true, result.error ?? '')
    assert.equal(receiver.requests.length, 3, 'the second delivery reused the socket, lost it, and was sent again')
  })

  it('is not slowed by a receiver that holds every socket it is given', async () => {
    const stalling = await startReceiver(hang)
    const fast = await startReceiver(answer(200))
    const stalled = Array.from({ length: 100 }, () => sendWebhook(request(stalling.url, { timeoutMs: 1500 })))
    await sleep(50)
    const result = await sendWebhook(request(fast.url))
    assert.equal(result.ok, true)
    assert.ok(result.durationMs < 200, `a healthy receiver took ${result.durationMs} ms`)
    const outcomes = await Promise.all(stalled)
    assert.ok(outcomes.every((outcome) => outcome.error === 'timed out after 1500 ms'))
  })

  it('gives up at once on a receiver that switches protocols (101 Upgrade), which once held its attempt and a send slot for ever', {
    timeout: 10_000,
  }, async () => {
    const switching = await startSwitchingReceiver()
    const started = performance.now()
    const result = await sendWebhook(request(switching.url, { timeoutMs: 3000 }))
    assert.equal(result.ok, false)
    assert.equal(result.statusCode, 101)
    assert.equal(result.error, 'receiver switched protocols (HTTP 101) instead of answering')
    assert.ok(performance.now() - started < 2000, 'before the time limit: nothing more will come')
    const website = await fetchPublicText(switching.url, { timeoutMs: 3000, maxBytes: 1024, allowPrivateTargets: true })
    assert.deepEqual(website, { ok: false, statusCode: 101, body: '', error: 'switched protocols (HTTP 101) instead of answering' })
  })

  it('never throws, for a malformed URL or header', async () => {
    assert.match((await sendWebhook(request('not a url'))).error ?? '', /invalid url/)
    assert.match((await sendWebhook(request('ftp://127.0.0.1/'))).error ?? '', /not http or https/)
    const receiver = await startReceiver(answer(200))
    const result = await sendWebhook(request(receiver.url, { headers: { 'X-Bad': 'line\nbreak' } }))
    assert.equal(result.ok, false)
    assert.match(result.error ?? '', /header/i)
    assert.equal(receiver.requests.length, 0)
  })
})

/** A receiver that answers every request with 101 Switching Protocols and keeps the connection open. */
async function startSwitchingReceiver(): Promise<{ url: string }> {
  const sockets = new Set<net.Socket>()
  const server = net.createServer((socket) => {
    sockets.add(socket)
    socket.on('error', () => {})
    socket.once('data', () => socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n'))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receivers.push({
    close: () => {
      for (const socket of sockets) socket.destroy()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  } as WebhookReceiver)
  return { url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/hook` }
}
