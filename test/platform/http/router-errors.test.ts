// Paths Fastify's router refuses before any route runs: a percent sign that begins no escape, a path parameter over
// 100 characters. They were answered in Fastify's own shape ({error: "Bad Request", code, message, statusCode}),
// without the request's id, and echoed the whole path back: 4 KB of it for a 4 KB id.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startTestService, type TestService } from '../../support/service.js'

describe('paths the router refuses', () => {
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
})
