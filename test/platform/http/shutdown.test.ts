// Stopping an instance: a request in flight on a kept-alive connection is answered, with Connection: close, and the
// stop does not then wait for that connection's keep-alive timeout.
import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { describe, it } from 'node:test'
import { bearer, startTestService } from '../../support/service.js'

describe('stopping an instance', () => {
  it("answers the request in flight with Connection: close and stops at once, not after the connection's keep-alive", {
    timeout: 30_000,
  }, async () => {
    const t = await startTestService('sqlite', { listen: true })
    const { apiKey } = await t.createProject('pro')
    const { hostname, port } = new URL(t.url)
    const socket = connect(Number(port), hostname)
    await new Promise((resolve) => socket.once('connect', resolve))
    let text = ''
    socket.on('data', (chunk) => {
      text += chunk
    })
    const closed = new Promise((resolve) => socket.once('close', resolve))
    // Expect: 100-continue makes the service say when it holds the request: from then on it is in flight.
    const body = JSON.stringify({ type: 'connect' })
    socket.write(
      `POST /api/v1/payloads HTTP/1.1\r\nHost: x\r\nAuthorization: ${bearer(apiKey).authorization}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
    )
    while (!text.startsWith('HTTP/1.1 100 Continue')) await new Promise((resolve) => setTimeout(resolve, 10))
    const started = performance.now()
    const stopped = t.stop()
    await new Promise((resolve) => setTimeout(resolve, 100))
    socket.write(body)
    await closed
    await stopped
    const tookMs = performance.now() - started
    const answer = text.slice(text.indexOf('\r\n\r\n') + 4)
    assert.match(answer, /^HTTP\/1\.1 201 /)
    assert.match(answer, /\r\nconnection: close\r\n/i)
    assert.ok(tookMs < 5000, `stopped in ${tookMs.toFixed(0)} ms`)
  })
})
