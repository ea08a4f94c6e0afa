import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { renderSignInProblemHtml } from '../../../src/web/dashboard/sign-in-problem-html.js'

describe('the sign-in problem page', () => {
  it("escapes the error's text, which may quote what the provider answered, and bounds it", () => {
    const message = `Sign-in failed: the provider answered invalid_request (<img src=x onerror="alert(1)"> & '${'x'.repeat(600)}')`
    const html = renderSignInProblemHtml({ kind: 'provider', status: 400, message }, '/assets/dashboard.css')
    assert.doesNotMatch(html, /<img|onerror="/)
    assert.match(html, /&#60;img src=x onerror=&#34;alert\(1\)&#34;&#62; &#38; &#39;x{300}/)
    const reason = /<p data-testid="sign-in-problem-reason">([^<]*)<\/p>/.exec(html)?.[1] ?? ''
    assert.ok(reason.endsWith('…'), 'cut, and says so')
    assert.doesNotMatch(html, /x{400}/)
  })

  it('names what failed by its status: a refused account, an unreachable provider, any other failure', () => {
    const titleOf = (status: number) =>
      /<h1>([^<]*)<\/h1>/.exec(renderSignInProblemHtml({ kind: 'provider', status, message: 'why' }, '/assets/dashboard.css'))?.[1]
    assert.equal(titleOf(403), 'This account may not sign in here')
    assert.equal(titleOf(502), 'The sign-in provider could not be reached')
    assert.equal(titleOf(400), 'Sign-in did not complete')
  })
})
