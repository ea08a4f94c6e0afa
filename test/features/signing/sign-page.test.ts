import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { DEFAULT_WEB_ROOT } from '../../../src/features/signing/page.js'
import { SIGNING_PAGE_CSP } from '../../../src/web/sign/page-html.js'
import { startTestService, type TestService } from '../../support/service.js'
import { ensureWebBuild } from '../../support/web-build.js'

describe('the signing page and its assets', () => {
  let t: TestService
  before(async () => {
    ensureWebBuild()
    t = await startTestService('sqlite')
  })
  after(() => t.stop())

  it('serves the same shell for every uuid, with a strict policy and no way to be framed or leak the URL', async () => {
    const known = await t.inject({ method: 'GET', url: '/sign/6f1c7d0e-8a1b-4c55-9a43-0b8e2a4d9f10' })
    const unknown = await t.inject({ method: 'GET', url: '/sign/anything' })
    for (const response of [known, unknown]) {
      assert.equal(response.statusCode, 200)
      assert.equal(response.headers['content-type'], 'text/html; charset=utf-8')
      assert.equal(response.headers['content-security-policy'], SIGNING_PAGE_CSP)
      assert.equal(response.headers['x-frame-options'], 'DENY')
      assert.equal(response.headers['referrer-policy'], 'no-referrer')
      assert.equal(response.headers['x-content-type-options'], 'nosniff')
      assert.equal(response.headers['cache-control'], 'no-cache')
    }
    assert.equal(known.body, unknown.body)
    assert.match(known.body, /<script type="module" src="\/assets\/sign\.js"><\/script>/)
    assert.doesNotMatch(known.body, /<script>|<style|\sstyle=|\son\w+=/i, 'no inline script, style or event handler')
  })

  it('answers 304 to a cache that already holds the shell', async () => {
    const first = await t.inject({ method: 'GET', url: '/sign/x' })
    const again = await t.inject({ method: 'GET', url: '/sign/y', headers: { 'if-none-match': String(first.headers.etag) } })
    assert.equal(again.statusCode, 304)
    assert.equal(again.body, '')
  })

  it('serves the entry files to be revalidated, and the hashed chunks to be kept for a year', async () => {
    const script = await t.inject({ method: 'GET', url: '/assets/sign.js' })
    assert.equal(script.statusCode, 200)
    assert.match(String(script.headers['content-type']), /javascript/)
    assert.equal(script.headers['cache-control'], 'no-cache')
    assert.ok(script.headers.etag)
    const style = await t.inject({ method: 'GET', url: '/assets/sign.css' })
    assert.equal(style.statusCode, 200)
    assert.match(String(style.headers['content-type']), /text\/css/)
    const chunk = readdirSync(path.join(DEFAULT_WEB_ROOT, 'chunks')).find((file) => file.endsWith('.js'))
    assert.ok(chunk, 'the build splits chunks')
    const chunkResponse = await t.inject({ method: 'GET', url: `/assets/chunks/${chunk}` })
    assert.equal(chunkResponse.statusCode, 200)
    assert.equal(chunkResponse.headers['cache-control'], 'public, max-age=31536000, immutable')
  })

  it('serves nothing outside the bundle directory', async () => {
    for (const url of ['/assets/../package.json', '/assets/%2e%2e/%2e%2e/package.json', '/assets/', '/assets/missing.js']) {
      const response = await t.inject({ method: 'GET', url })
      assert.ok([403, 404].includes(response.statusCode), `${url}: ${response.statusCode}`)
      assert.doesNotMatch(response.body, /"name": "countersign"/)
    }
  })
})
