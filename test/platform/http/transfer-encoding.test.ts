// A body sent with a transfer coding besides chunked (`Transfer-Encoding: gzip, chunked`): Node's parser undoes the
// chunking and hands on the gzip bytes, which were read as JSON that does not parse (400), and plain JSON labelled
// so was taken as it was. Refused as what it is, as a Content-Encoding is: 415, and nothing created.
import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { gzipSync } from 'node:zlib'
import { bearer, startTestService, type TestService } from '../../support/service.js'

/** Sends a POST of `body` in one chunk, with the given Transfer-Encoding, on a raw socket; the status line's code. */
async function postChunked(url: string, apiKey: string, transferEncoding: string, body: Buffer): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(url)
  const socket = connect(Number(port), hostname)
  await new Promise((resolve) => socket.once('connect', resolve))
  const head = [
    'POST /api/v1/payloads HTTP/1.1',
    `Host: ${hostname}`,
    `Authorization: ${bearer(apiKey).authorization}`,
    'Content-Type: application/json',
    `Transfer-Encoding: ${transferEncoding}`,
    'Connection: close',
    '',
    '',
  ].join('\r\n')
  socket.write(Buffer.concat([Buffer.from(head), Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]))
  let text = ''
  for await (const chunk of socket) text += chunk
  return { status: Number(text.split(' ')[1]), text }
}

describe('a transfer coding besides chunked', () => {
  let t: TestService
  before(async () => {
    t = await startTestService('sqlite', { listen: true })
  })
  after(() => t.stop())

  it('is 415 for gzip bytes and for plain JSON labelled gzip, and creates nothing; chunked alone is taken', async () => {
    const { apiKey, projectId } = await t.createProject('pro')
    const json = '{"type":"connect"}'
    for (const [coding, body] of [
      ['gzip, chunked', gzipSync(json)],
      ['gzip, chunked', Buffer.from(json)],
      ['deflate,chunked', Buffer.from(json)],
    ] as const) {
      const { status, text } = await postChunked(t.url, apiKey, coding, body)
      assert.equal(status, 415, `${coding}: ${text}`)
      assert.match(text, /Unsupported Transfer-Encoding/)
    }
    const payloads = () => t.service.ctx.storage.db.selectFrom('payloads').select('uuid').where('project_id', '=', projectId).execute()
    assert.equal((await payloads()).length, 0)
    const chunked = await postChunked(t.url, apiKey, 'chunked', Buffer.from(json))
    assert.equal(chunked.status, 201, chunked.text)
    assert.equal((await payloads()).length, 1)
  })
})
