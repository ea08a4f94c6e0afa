// SIGNING_URL: the signing pages on a host of their own, away from the dashboard's session. The browser's side (a
// script on the signing page cannot read the dashboard) is in test/e2e/signing-origin.browser.test.ts.
import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { bearer, startTestService, type TestService } from '../../support/service.js'
import { ensureWebBuild } from '../../support/web-build.js'

const PUBLIC_URL = 'http://dash.countersign.test'
const SIGNING_URL = 'http://sign.countersign.test'

describe('the signing pages on SIGNING_URL, the dashboard on PUBLIC_URL', () => {
  let t: TestService
  let apiKey: string
  let uuid: string

  before(async () => {
    ensureWebBuild()
    t = await startTestService('sqlite', { listen: true, env: { PUBLIC_URL, SIGNING_URL } })
    ;({ apiKey } = await t.createProject('pro'))
    const created = await t.inject({ method: 'POST', url: '/api/v1/payloads', headers: bearer(apiKey), payload: { type: 'connect' } })
    assert.equal(created.statusCode, 201, created.body)
    uuid = created.json().uuid
    assert.equal(created.json().signingUrl, `${SIGNING_URL}/sign/${uuid}`)
  })
  after(() => t.stop())

  const get = (host: string, url: string, method: 'GET' | 'HEAD' | 'POST' = 'GET') => t.inject({ method, url, headers: { host } })

  it('hands out signing URLs on SIGNING_URL, and the connect challenge names its host, where the user is', async () => {
    const request = await t.inject({ method: 'GET', url: `/api/v1/sign/${uuid}` })
    const challenge: string = request.json().challenge
    assert.match(challenge, /^sign\.countersign\.test wants you to sign in/)
    assert.ok(challenge.includes(`URI: ${SIGNING_URL}/sign/${uuid}`))
  })

  it('sends a signing page asked for on the dashboard host to the signing host, query kept', async () => {
    for (const method of ['GET', 'HEAD'] as const) {
      const moved = await get('dash.countersign.test', `/sign/${uuid}?from=mail`, method)
      assert.equal(moved.statusCode, 307, method)
      assert.equal(moved.headers.location, `${SIGNING_URL}/sign/${uuid}?from=mail`)
    }
    assert.equal((await get('sign.countersign.test', `/sign/${uuid}`)).statusCode, 200)
  })

  it('sends the dashboard and its sign-in, asked for on the signing host, to PUBLIC_URL: no session is ever set there', async () => {
    for (const path of [
      '/dashboard',
      '/dashboard/projects/p1',
      '/auth/login',
      '/auth/local?token=abc',
      '/auth/methods',
      '/auth/callback?code=x',
    ]) {
      const moved = await get('sign.countersign.test', path)
      assert.equal(moved.statusCode, 307, path)
      assert.equal(moved.headers.location, `${PUBLIC_URL}${path}`)
    }
    assert.equal((await get('dash.countersign.test', '/dashboard')).statusCode, 200)
  })

  it('serves requests on any other host as they come (a health check by address, a proxy that rewrites Host): no redirect loop', async () => {
    assert.equal((await get('10.0.0.5:3000', `/sign/${uuid}`)).statusCode, 200)
    assert.equal((await get('10.0.0.5:3000', '/dashboard')).statusCode, 200)
  })

  it('serves the API, the wallet API and the assets on both hosts, and redirects no other method', async () => {
    for (const host of ['dash.countersign.test', 'sign.countersign.test']) {
      assert.equal((await get(host, `/api/v1/sign/${uuid}`)).statusCode, 200, host)
      assert.equal((await get(host, '/healthz')).statusCode, 200, host)
      t.clock.advance(1000)
      const read = await t.inject({ method: 'GET', url: `/api/v1/payloads/${uuid}`, headers: { host, ...bearer(apiKey) } })
      assert.equal(read.statusCode, 200, host)
    }
    assert.notEqual((await get('sign.countersign.test', '/auth/logout', 'POST')).statusCode, 307)
  })

  it('redirects only to its own origins: a request target in absolute form is not redirected', async () => {
    const { hostname, port } = new URL(t.url)
    const socket = connect(Number(port), hostname)
    await new Promise((resolve) => socket.once('connect', resolve))
    socket.write(`GET http://evil.example/sign/${uuid} HTTP/1.1\r\nHost: dash.countersign.test\r\nConnection: close\r\n\r\n`)
    let text = ''
    for await (const chunk of socket) text += chunk
    const head = text.split('\r\n\r\n')[0] ?? ''
    assert.doesNotMatch(head, /^HTTP\/1\.1 307/)
    assert.doesNotMatch(head, /location:/i)
  })
})
