import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { localSignInUrl } from '../../../src/features/accounts/session-tokens.js'
import { TestBrowser } from '../../support/cookie-client.js'
import { dashboardClient } from '../../support/dashboard.js'
import { forEachDatabase } from '../../support/databases.js'
import { startTestService, type TestService } from '../../support/service.js'
import { parseSetCookie } from '../../support/set-cookie.js'

// The `countersign` commands that sign in (login-link, serve, project create --email) start processes: they are in
// auth.local.cli.test.ts.

const PUBLIC_URL = 'http://countersign.test'
const MINUTE_MS = 60_000
const DAY_MS = 24 * 60 * MINUTE_MS

forEachDatabase('dashboard sign-in with local links', (dialect) => {
  let t: TestService
  before(async () => {
    t = await startTestService(dialect, { listen: true, env: { PUBLIC_URL } })
  })
  after(() => t.stop())

  const newBrowser = () => new TestBrowser({ [PUBLIC_URL]: t.url })
  const sessionUrl = new URL(`${PUBLIC_URL}/api/v1/session`)
  const freshLink = async () => {
    const admin = await t.service.ctx.accounts.ensureLocalAdmin()
    return new URL(localSignInUrl(PUBLIC_URL, (await t.service.ctx.sessions.createLoginToken(admin.id)).token))
  }
  const signIn = async () => {
    const browser = newBrowser()
    const response = await browser.request(await freshLink())
    assert.equal(response.status, 303)
    return browser
  }

  it('tells the dashboard that this server signs in with local links, not OpenID Connect', async () => {
    const methods = await t.inject({ method: 'GET', url: '/auth/methods' })
    assert.deepEqual(methods.json(), { oidc: false, localLink: true })
  })

  it('sets the session cookie HttpOnly, SameSite=Lax, on the whole site, for 30 days, not Secure over http', async () => {
    const response = await newBrowser().request(await freshLink())
    assert.deepEqual(response.setCookies.length, 1)
    const cookie = parseSetCookie(response.setCookies[0])
    assert.equal(cookie.name, 'cs_session')
    assert.match(cookie.value, /^[\w-]{43}$/)
    assert.deepEqual(cookie.attributes, ['HttpOnly', 'Max-Age=2592000', 'Path=/', 'SameSite=Lax'])
  })

  it('a link expires 15 minutes after it was made', async () => {
    const inTime = await freshLink()
    const late = await freshLink()
    t.clock.advance(15 * MINUTE_MS - 1)
    assert.equal((await newBrowser().request(inTime)).status, 303)
    t.clock.advance(1)
    assert.equal((await newBrowser().request(late)).status, 401)
  })

  it("answers a used link in a browser with a page saying how to get a new one, under the pages' headers; JSON to a client", async () => {
    const link = await freshLink()
    assert.equal((await newBrowser().request(link)).status, 303)
    const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'
    const page = await t.inject({ method: 'GET', url: `${link.pathname}${link.search}`, headers: { accept: browserAccept } })
    assert.equal(page.statusCode, 401)
    assert.match(String(page.headers['content-type']), /^text\/html; charset=utf-8/)
    assert.match(page.body, /<html lang="en">/)
    assert.match(page.body, /<title>This sign-in link does not work · Countersign<\/title>/)
    assert.match(page.body, /<h1>This sign-in link does not work<\/h1>/)
    assert.match(page.body, /countersign login-link/)
    assert.match(page.body, /<link rel="stylesheet" href="\/assets\/dashboard.css">/)
    assert.doesNotMatch(page.body, /<script|<style|style=/, 'no script, no inline style')
    // The dashboard's own headers: its policy, no framing, nosniff, no referrer, nothing stored.
    const dashboard = await t.inject({ method: 'GET', url: '/dashboard', headers: { accept: browserAccept } })
    for (const name of ['content-security-policy', 'x-frame-options', 'x-content-type-options', 'cross-origin-opener-policy']) {
      assert.ok(page.headers[name], name)
      assert.equal(page.headers[name], dashboard.headers[name], name)
    }
    assert.equal(page.headers['referrer-policy'], 'no-referrer')
    assert.equal(page.headers['cache-control'], 'no-store')
    assert.equal(page.headers.vary, 'Accept', 'a page or JSON by Accept: a cache must not give one for the other')

    for (const accept of [undefined, 'application/json', '*/*']) {
      const answer = await t.inject({ method: 'GET', url: `${link.pathname}?token=bogus`, headers: accept ? { accept } : {} })
      assert.equal(answer.statusCode, 401, accept)
      assert.match(answer.json().error, /invalid, already used or expired.*countersign login-link/, accept)
    }
  })

  it('answers a browser with a page, not JSON, for a link cut before its token and for the provider routes this server lacks', async () => {
    const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'
    const cut = await t.inject({ method: 'GET', url: '/auth/local', headers: { accept: browserAccept } })
    assert.equal(cut.statusCode, 422)
    assert.match(cut.body, /<h1>This sign-in link does not work<\/h1>/)
    assert.match(cut.body, /countersign login-link/)
    for (const path of ['/auth/login', '/auth/callback?code=x&state=y']) {
      const page = await t.inject({ method: 'GET', url: path, headers: { accept: browserAccept } })
      assert.equal(page.statusCode, 404, path)
      assert.match(String(page.headers['content-type']), /^text\/html; charset=utf-8/, path)
      assert.match(page.body, /<h1>This server has no sign-in provider<\/h1>/, path)
      assert.match(page.body, /npx countersign login-link/, path)
      assert.match(String(page.headers['content-security-policy']), /script-src 'self'/, path)
      assert.equal(page.headers.vary, 'Accept', path)
    }
    const client = await t.inject({ method: 'GET', url: '/auth/local', headers: { accept: 'application/json' } })
    assert.equal(client.statusCode, 422)
    assert.deepEqual(client.json().details, [{ field: 'token', message: 'is required' }])
  })

  it('stores only hashes of links and sessions', async () => {
    const link = await freshLink()
    const token = link.searchParams.get('token') as string
    const browser = newBrowser()
    await browser.request(link)
    const session = browser.cookie(sessionUrl, 'cs_session') as string
    const db = t.service.ctx.storage.db
    const tokens = await db.selectFrom('login_tokens').select('token_hash').execute()
    const sessions = await db.selectFrom('sessions').select('id_hash').execute()
    const stored = JSON.stringify([tokens, sessions])
    assert.equal(stored.includes(token), false)
    assert.equal(stored.includes(session), false)
    assert.ok(sessions.some((s) => /^[0-9a-f]{64}$/.test(s.id_hash)))
  })

  it('answers sign-in and sign-out, which set or clear the session cookie, with Cache-Control: no-store', async () => {
    const link = await freshLink()
    const signedIn = await t.inject({ method: 'GET', url: `${link.pathname}${link.search}` })
    assert.equal(signedIn.statusCode, 303)
    assert.equal(signedIn.headers['cache-control'], 'no-store')
    const logout = await t.inject({ method: 'POST', url: '/auth/logout', headers: { origin: PUBLIC_URL } })
    assert.equal(logout.statusCode, 303)
    assert.equal(logout.headers['cache-control'], 'no-store')
  })

  it('logout ends the session on the server, not only in the browser', async () => {
    const browser = await signIn()
    const token = browser.cookie(sessionUrl, 'cs_session') as string
    const logout = await browser.request(new URL(`${PUBLIC_URL}/auth/logout`), { method: 'POST', headers: { origin: PUBLIC_URL } })
    assert.equal(logout.status, 303)
    assert.deepEqual(parseSetCookie(logout.setCookies[0]), {
      name: 'cs_session',
      value: '',
      attributes: ['Expires=Thu, 01 Jan 1970 00:00:00 GMT', 'HttpOnly', 'Max-Age=0', 'Path=/', 'SameSite=Lax'],
    })
    assert.equal(browser.cookie(sessionUrl, 'cs_session'), undefined)

    const kept = newBrowser()
    kept.setCookie(sessionUrl, 'cs_session', token)
    assert.equal((await kept.request(sessionUrl)).status, 401)
  })

  it('logout from a form post works, and logout from another site is refused', async () => {
    const browser = await signIn()
    const logoutUrl = new URL(`${PUBLIC_URL}/auth/logout`)
    const foreign = await browser.request(logoutUrl, { method: 'POST', form: {}, headers: { origin: 'https://evil.example' } })
    assert.equal(foreign.status, 403)
    const missing = await browser.request(logoutUrl, { method: 'POST' })
    assert.equal(missing.status, 403)
    assert.equal((await browser.request(sessionUrl)).status, 200)

    const form = await browser.request(logoutUrl, { method: 'POST', form: {}, headers: { origin: PUBLIC_URL } })
    assert.equal(form.status, 303)
    assert.equal((await browser.request(sessionUrl)).status, 401)
  })

  it('a session ends after 7 days without use, and 30 days after sign-in however much it is used', async () => {
    const idle = await signIn()
    const busy = await signIn()
    for (let day = 1; day <= 29; day++) {
      t.clock.advance(DAY_MS)
      assert.equal((await busy.request(sessionUrl)).status, 200, `busy session on day ${day}`)
      if (day === 6) assert.equal((await idle.request(sessionUrl)).status, 200, 'idle session after 6 days')
      if (day === 13) assert.equal((await idle.request(sessionUrl)).status, 401, 'idle session 7 days after its last use')
    }
    t.clock.advance(DAY_MS)
    assert.equal((await busy.request(sessionUrl)).status, 401, 'busy session after 30 days')
  })

  it('signing in again replaces the session the browser had', async () => {
    const browser = await signIn()
    const before = browser.cookie(sessionUrl, 'cs_session') as string
    assert.equal((await browser.request(await freshLink())).status, 303)
    assert.notEqual(browser.cookie(sessionUrl, 'cs_session'), before)
    const old = newBrowser()
    old.setCookie(sessionUrl, 'cs_session', before)
    assert.equal((await old.request(sessionUrl)).status, 401)
  })

  it('without a session, GET /api/v1/session is 401 and says how to sign in; /auth/login says OIDC is off', async () => {
    const response = await dashboardClient(t, undefined).get('/api/v1/session')
    assert.equal(response.status, 401)
    assert.match(response.body.error, /countersign login-link/)
    const forged = await dashboardClient(t, 'cs_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA').get('/api/v1/session')
    assert.equal(forged.status, 401)
    const login = await newBrowser().request(new URL(`${PUBLIC_URL}/auth/login`))
    assert.equal(login.status, 404)
    assert.match(JSON.parse(login.body).error, /not configured/)
  })
})

describe('the session cookie under https', () => {
  let t: TestService
  before(async () => {
    t = await startTestService('sqlite', { env: { PUBLIC_URL: 'https://countersign.example' } })
  })
  after(() => t.stop())

  it('is Secure and named __Host-cs_session, which no other host (a sibling subdomain) can set', async () => {
    const admin = await t.service.ctx.accounts.ensureLocalAdmin()
    const { token } = await t.service.ctx.sessions.createLoginToken(admin.id)
    const response = await t.inject({ method: 'GET', url: `/auth/local?token=${token}` })
    assert.equal(response.statusCode, 303)
    const cookie = parseSetCookie(response.headers['set-cookie'] as string)
    assert.equal(cookie.name, '__Host-cs_session')
    assert.match(cookie.value, /^[\w-]{43}$/)
    assert.deepEqual(cookie.attributes, ['HttpOnly', 'Max-Age=2592000', 'Path=/', 'SameSite=Lax', 'Secure'])
  })

  it('does not accept a session in a plain cs_session cookie, which a sibling subdomain could have set', async () => {
    const admin = await t.service.ctx.accounts.ensureLocalAdmin()
    const session = await t.service.ctx.sessions.start(admin.id)
    const plain = await t.inject({ method: 'GET', url: '/api/v1/session', headers: { cookie: `cs_session=${session.token}` } })
    assert.equal(plain.statusCode, 401)
    const prefixed = await t.inject({ method: 'GET', url: '/api/v1/session', headers: { cookie: `__Host-cs_session=${session.token}` } })
    assert.equal(prefixed.statusCode, 200)
  })
})

describe('two session cookies in one request', () => {
  let t: TestService
  before(async () => {
    t = await startTestService('sqlite')
  })
  after(() => t.stop())

  it("do not let the attacker's cookie, sent first (a narrower Path or a parent Domain), choose the session", async () => {
    const victim = await t.service.ctx.accounts.recordSignIn({
      issuer: 'https://idp.example',
      subject: 'victim',
      email: 'v@example.com',
      name: 'v',
    })
    const attacker = await t.service.ctx.accounts.recordSignIn({
      issuer: 'https://idp.example',
      subject: 'mallory',
      email: 'm@example.com',
      name: 'm',
    })
    const victimSession = await t.service.ctx.sessions.start(victim.id)
    const attackerSession = await t.service.ctx.sessions.start(attacker.id)
    for (const cookie of [
      `cs_session=${attackerSession.token}; cs_session=${victimSession.token}`,
      `cs_session=${victimSession.token}; theme=dark; cs_session=${attackerSession.token}`,
    ]) {
      const response = await t.inject({ method: 'GET', url: '/api/v1/session', headers: { cookie } })
      assert.equal(response.statusCode, 401, response.body)
    }
    const alone = await t.inject({ method: 'GET', url: '/api/v1/session', headers: { cookie: `cs_session=${victimSession.token}` } })
    assert.equal(alone.json().account.id, victim.id)
  })
})
