import assert from 'node:assert/strict'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { renderSigningPageHtml, SIGNING_PAGE_CSP } from '../../../src/web/sign/page-html.js'

const options = { title: 'Sign request · Countersign', scriptSrc: '/assets/sign.js', styleHref: '/assets/sign.css' }

describe('the signing page shell', () => {
  it('runs no inline script and carries no inline style, so the strict policy can be sent', () => {
    const html = renderSigningPageHtml(options)
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)]
    assert.equal(scripts.length, 1)
    assert.match(scripts[0]?.[1] ?? '', /type="module" src="\/assets\/sign.js"/)
    assert.equal(scripts[0]?.[2], '')
    assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/i)
  })

  it('escapes the values it is given, even a hostile title', () => {
    const html = renderSigningPageHtml({ ...options, title: '"><script>alert(1)</script>' })
    assert.doesNotMatch(html, /<script>alert/)
    assert.match(html, /<title>&#34;&#62;&#60;script&#62;alert\(1\)&#60;\/script&#62;<\/title>/)
  })

  it('keeps the payload uuid out of referrers, since the uuid is the capability', () => {
    assert.match(renderSigningPageHtml(options), /<meta name="referrer" content="no-referrer">/)
  })

  it('sends a policy without inline or eval script and without framing', () => {
    const directives = new Map(
      SIGNING_PAGE_CSP.split(';')
        .map((part) => part.trim().split(/\s+/) as [string, ...string[]])
        .map(([name, ...values]) => [name, values]),
    )
    assert.deepEqual(directives.get('default-src'), ["'none'"])
    assert.deepEqual(directives.get('script-src'), ["'self'"])
    assert.deepEqual(directives.get('style-src'), ["'self'"])
    assert.deepEqual(directives.get('frame-ancestors'), ["'none'"])
    assert.deepEqual(directives.get('connect-src'), ["'self'"])
  })
})

describe('the browser code (the signing page, what it shares with the dashboard, and the dashboard)', () => {
  it('never hands text to an HTML parser (payload data must stay inert)', async () => {
    const directory = path.resolve(import.meta.dirname, '../../../src/web')
    const files = (await readdir(directory, { recursive: true })).filter((file) => file.endsWith('.ts'))
    assert.ok(files.length > 5 && files.includes(path.join('shared', 'api-client.ts')) && files.includes(path.join('sign', 'main.ts')))
    for (const file of files) {
      const source = await readFile(path.join(directory, file), 'utf8')
      assert.doesNotMatch(source, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|DOMParser|createContextualFragment/, file)
    }
  })
})
