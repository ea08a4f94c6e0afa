// Paths Fastify's router refuses before any route runs: a percent sign that begins no escape, a path parameter over
// 100 characters. They were answered in Fastify's own shape ({error: "Bad Request", code, message, statusCode}),
// without the request's id, and echoed the whole path back: 4 KB of it for a 4 KB id. And what Node's parser refuses
// before any request exists (not HTTP, headers over 16 KB), which Fastify answered in its own shape too.
import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { createPayload } from '../../support/payloads.js'
import { startTestService, type TestService } from '../../support/service.js'

describe('what is refused before any route runs', () => {
  let t: TestService
  before(async () => {
    t = await startTestService('sqlite', { listen: true })
  })
  after(() => t.stop())

  for (const [name, path, status, error] of [
    ['a % that begins no escape', '/api/v1/payloads/%zz', 400, 'The request path is not valid: a % in it must begin an escape such as %2F'],
    [
      'a path parameter of 4,000 characters',
      `/api/v1/payloads/${'a'.repeat(4000)}`,
      414,
      'A segment of the request path is longer than 100 characters',
    ],
    [
      'a signing request id of 101 characters',
      `/api/v1/sign/${'b'.repeat(101)}`,
      414,
      'A segment of the request path is longer than 100 characters',
    ],
  ] as const) {
    it(`answers ${name} with ${status} in the service's error shape, its request id, and nothing of the path`, async () => {
      const response = await fetch(`${t.url}${path}`)
      assert.equal(response.status, status)
      assert.deepEqual(await response.json(), { error })
      assert.match(response.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/)
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff')
    })
  }

  it('still serves a path parameter of 100 characters to its route', async () => {
    const response = await fetch(`${t.url}/api/v1/sign/${'c'.repeat(100)}`)
    assert.equal(response.status, 404)
  })

  /** Writes `bytes` on a raw socket and reads until the service closes it. */
  const sendRaw = async (bytes: string) => {
    const { hostname, port } = new URL(t.url)
    const socket = connect(Number(port), hostname)
    await new Promise((resolve) => socket.once('connect', resolve))
    socket.write(bytes)
    let text = ''
    for await (const chunk of socket) text += chunk
    const [head = '', body = ''] = text.split('\r\n\r\n')
    return { status: Number(head.split(' ')[1]), head, body }
  }

  for (const [name, bytes, status, error] of [
    ['a request line that is not HTTP', 'GET /healthz NOT-HTTP\r\n\r\n', 400, 'The request is not valid HTTP'],
    ['a header line without a colon', 'GET /healthz HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n', 400, 'The request is not valid HTTP'],
    [
      '20 KB of headers',
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'The request headers are larger than 16 KB',
    ],
  ] as const) {
    it(`answers ${name} with ${status} in the service's error shape and closes the connection`, async () => {
      const response = await sendRaw(bytes)
      assert.equal(response.status, status, response.head)
      assert.deepEqual(JSON.parse(response.body), { error })
      assert.match(response.head, /\r\ncontent-type: application\/json; charset=utf-8\r\n/i)
      assert.match(response.head, /\r\nx-content-type-options: nosniff\r\n/i)
    })
  }

  it("writes nothing into a live stream's body when garbage follows its request on the same connection: it closes it", async () => {
    const { apiKey } = await t.createProject('pro')
    const uuid = await createPayload(t, apiKey)
    const { hostname, port } = new URL(t.url)
    const socket = connect(Number(port), hostname)
    await new Promise((resolve) => socket.once('connect', resolve))
    socket.write(`GET /api/v1/sign/${uuid}/events HTTP/1.1\r\nHost: x\r\n\r\n`)
    let text = ''
    socket.on('data', (chunk) => {
      text += chunk
    })
    while (!text.includes('\r\n\r\n')) await new Promise((resolve) => setTimeout(resolve, 10))
    socket.write('GARBAGE NOT HTTP\r\n\r\n')
    await new Promise((resolve) => socket.once('close', resolve))
    assert.match(text, /^HTTP\/1\.1 200 OK\r\n/)
    assert.match(text, /content-type: text\/event-stream/i)
    assert.doesNotMatch(text, /HTTP\/1\.1 400|not valid HTTP/, 'no second answer inside the stream')
  })

  it('refuses two Authorization headers, of which Node would keep the first and drop the other without a word', async () => {
    const { apiKey } = await t.createProject('pro')
    const { apiKey: other } = await t.createProject('pro')
    const response = await sendRaw(
      `GET /api/v1/payloads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nAuthorization: Bearer ${other}\r\nConnection: close\r\n\r\n`,
    )
    assert.equal(response.status, 400, response.head)
    assert.deepEqual(JSON.parse(response.body), { error: 'Send one Authorization header' })
  })

  it('still serves the next connection after them', async () => {
    assert.equal((await fetch(`${t.url}/healthz`)).status, 200)
  })
})

describe('requests that take too long to arrive (REQUEST_TIMEOUT_MS)', () => {
  let t: TestService
  before(async () => {
    t = await startTestService('sqlite', { listen: true, env: { REQUEST_TIMEOUT_MS: '1000', LIVE_HEARTBEAT_MS: '300' } })
  })
  after(() => t.stop())

  /** Opens a connection, writes `head`, then `drip` every 200 ms until the service closes it; what it answered, and when. */
  const trickle = async (head: string, drip: string) => {
    const { hostname, port } = new URL(t.url)
    const socket = connect(Number(port), hostname)
    await new Promise((resolve) => socket.once('connect', resolve))
    const started = Date.now()
    socket.write(head)
    const dripping = setInterval(() => socket.writable && socket.write(drip), 200)
    let text = ''
    try {
      for await (const chunk of socket) text += chunk
    } catch {
      // A reset after the answer: what was read is the answer.
    } finally {
      clearInterval(dripping)
    }
    const [answerHead = '', body = ''] = text.split('\r\n\r\n')
    return { status: Number(answerHead.split(' ')[1]), body, ms: Date.now() - started }
  }

  it('answers a body trickled in a byte at a time with 408 and closes the connection: no key needed to hold one open', {
    timeout: 15_000,
  }, async () => {
    const { apiKey } = await t.createProject('pro')
    const uuid = await createPayload(t, apiKey)
    const approval = `POST /api/v1/sign/${uuid}/approve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 65000\r\n\r\n{`
    const answer = await trickle(approval, ' ')
    assert.equal(answer.status, 408)
    assert.deepEqual(JSON.parse(answer.body), { error: 'The request took too long to arrive' })
    assert.ok(answer.ms < 5000, `closed after ${answer.ms} ms`)
    // Refused at once for want of a key, the rest of the body is still not waited for without end.
    const unauthorized = await trickle(
      'POST /api/v1/payloads HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 65000\r\n\r\n{',
      ' ',
    )
    assert.equal(unauthorized.status, 401)
    assert.ok(unauthorized.ms < 5000, `closed after ${unauthorized.ms} ms`)
  })

  it('answers headers trickled in one at a time the same way', { timeout: 15_000 }, async () => {
    const answer = await trickle('GET /healthz HTTP/1.1\r\nHost: x\r\n', 'X-Slow: 1\r\n')
    assert.equal(answer.status, 408)
    assert.ok(answer.ms < 5000, `closed after ${answer.ms} ms`)
  })

  it('does not cut a live stream, whose request arrived whole, however long its answer lasts', async () => {
    const { apiKey } = await t.createProject('pro')
    const uuid = await createPayload(t, apiKey)
    const controller = new AbortController()
    const response = await fetch(`${t.url}/api/v1/sign/${uuid}/events`, { signal: controller.signal })
    assert.equal(response.status, 200)
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    const started = Date.now()
    let heartbeats = 0
    while (Date.now() - started < 3000) {
      const { value, done } = await reader.read()
      assert.equal(done, false, 'the stream is still open')
      if (new TextDecoder().decode(value).startsWith(':')) heartbeats++
    }
    assert.ok(heartbeats >= 5, `${heartbeats} heartbeats in 3 s`)
    controller.abort()
  })
})
