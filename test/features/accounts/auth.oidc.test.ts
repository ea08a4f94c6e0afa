import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { deriveStateKey, openState, sealState } from '../../../src/platform/crypto/signed-state.js'
import { TestBrowser } from '../../support/cookie-client.js'
import { forEachDatabase } from '../../support/databases.js'
import { startIdentityProvider, type TestIdentityProvider } from '../../support/oidc-provider.js'
import { startTestService, type TestService } from '../../support/service.js'
import { parseSetCookie } from '../../support/set-cookie.js'

const PUBLIC_URL = 'http://countersign.test'
const REDIRECT_URI = `${PUBLIC_URL}/auth/callback`

forEachDatabase('dashboard sign-in with OpenID Connect', (dialect) => {
  let idp: TestIdentityProvider
  let t: TestService
  before(async () => {
    idp = await startIdentityProvider(REDIRECT_URI, {
      alice: { email: 'alice@example.com', email_verified: true, name: 'Alice Example' },
      mallory: { email: 'victim@example.com', email_verified: false, name: 'Mallory' },
    })
    t = await startTestService(dialect, {
      listen: true,
      env: { PUBLIC_URL, OIDC_ISSUER: idp.issuer, OIDC_CLIENT_ID: idp.clientId, OIDC_CLIENT_SECRET: idp.clientSecret },
    })
  })
  after(async () => {
    await t.stop()
    await idp.stop()
  })

  const newBrowser = () => new TestBrowser({ [PUBLIC_URL]: t.url })
  const isCallback = (url: URL) => url.href.startsWith(REDIRECT_URI)
  const login = new URL(`${PUBLIC_URL}/auth/login`)
  const sessionOf = (browser: TestBrowser) =>
    browser.request(new URL(`${PUBLIC_URL}/api/v1/session`)).then((r) => ({ status: r.status, body: JSON.parse(r.body) }))

  it('signs in end to end: login, the provider, the callback, a session cookie, then the account', async () => {
    const browser = newBrowser()
    const start = await browser.request(login)
    assert.equal(start.status, 302)
    const authorization = start.location as URL
    assert.equal(authorization.origin, idp.issuer)
    assert.equal(authorization.searchParams.get('redirect_uri'), REDIRECT_URI)
    assert.equal(authorization.searchParams.get('code_challenge_method'), 'S256')
    assert.match(authorization.searchParams.get('state') ?? '', /^[\w-]{20,}$/)
    assert.match(authorization.searchParams.get('nonce') ?? '', /^[\w-]{20,}$/)
    const flowCookie = parseSetCookie(start.setCookies[0])
    assert.equal(flowCookie.name, 'cs_oidc_flow')
    assert.match(flowCookie.value, /^[\w.-]+$/)
    assert.deepEqual(flowCookie.attributes, ['HttpOnly', 'Max-Age=600', 'Path=/', 'SameSite=Lax'])

    const callback = await browser.signInAtProvider(authorization, 'alice', isCallback)
    const signedIn = await browser.request(callback)
    assert.equal(signedIn.status, 303)
    assert.equal(signedIn.location?.href, `${PUBLIC_URL}/dashboard`)
    const sessionCookie = parseSetCookie(signedIn.setCookies.find((c) => c.startsWith('cs_session=')))
    assert.match(sessionCookie.value, /^[\w-]{43}$/)
    assert.deepEqual(sessionCookie.attributes, ['HttpOnly', 'Max-Age=2592000', 'Path=/', 'SameSite=Lax'])
    assert.ok(
      signedIn.setCookies.some((c) => /^cs_oidc_flow=; .*Max-Age=0/.test(c)),
      'the flow cookie is cleared',
    )

    const session = await sessionOf(browser)
    assert.equal(session.status, 200)
    assert.deepEqual(session.body, { account: { id: session.body.account.id, email: 'alice@example.com', name: 'Alice Example' } })
    const row = await t.service.ctx.storage.db
      .selectFrom('accounts')
      .selectAll()
      .where('id', '=', session.body.account.id)
      .executeTakeFirstOrThrow()
    assert.equal(row.issuer, idp.issuer)
    assert.equal(row.subject, 'alice')
  })

  it('a second sign-in keeps the account, rotates the cookie and ends the previous session', async () => {
    const browser = newBrowser()
    await browser.request(await browser.signInAtProvider(login, 'alice', isCallback))
    const first = await sessionOf(browser)
    const firstToken = browser.cookie(login, 'cs_session') as string

    await browser.request(await browser.signInAtProvider(login, 'alice', isCallback))
    const secondToken = browser.cookie(login, 'cs_session')
    assert.notEqual(secondToken, firstToken)
    assert.equal((await sessionOf(browser)).body.account.id, first.body.account.id)

    const stale = newBrowser()
    stale.setCookie(login, 'cs_session', firstToken)
    assert.equal((await sessionOf(stale)).status, 401)
  })

  it('refuses a callback whose state was changed, and signs nobody in', async () => {
    const browser = newBrowser()
    const callback = await browser.signInAtProvider(login, 'alice', isCallback)
    callback.searchParams.set('state', 'a-state-this-browser-never-sent')
    const response = await browser.request(callback)
    assert.equal(response.status, 400)
    assert.match(JSON.parse(response.body).error, /^Sign-in failed: .*"state"/)
    assert.equal(browser.cookie(login, 'cs_session'), undefined)
    assert.equal((await sessionOf(browser)).status, 401)
  })

  it('refuses a replayed callback, even with the flow cookie replayed too', async () => {
    const browser = newBrowser()
    const callback = await browser.signInAtProvider(login, 'alice', isCallback)
    const flowCookie = browser.cookie(login, 'cs_oidc_flow') as string
    assert.equal((await browser.request(callback)).status, 303)

    const attacker = newBrowser()
    attacker.setCookie(login, 'cs_oidc_flow', flowCookie)
    const replayed = await attacker.request(callback)
    assert.equal(replayed.status, 400)
    assert.match(JSON.parse(replayed.body).error, /refused the authorization code/)
    assert.equal(attacker.cookie(login, 'cs_session'), undefined)

    const withoutFlow = await newBrowser().request(callback)
    assert.equal(withoutFlow.status, 400)
    assert.match(JSON.parse(withoutFlow.body).error, /start again at \/auth\/login/)
  })

  it('refuses a callback once the flow is older than 10 minutes, and a flow cookie altered by hand', async () => {
    const browser = newBrowser()
    const callback = await browser.signInAtProvider(login, 'alice', isCallback)
    const flowCookie = browser.cookie(login, 'cs_oidc_flow') as string
    const [body, signature] = flowCookie.split('.') as [string, string]
    const altered = JSON.parse(Buffer.from(body, 'base64url').toString())
    altered.value.state = callback.searchParams.get('state')
    altered.expiresAtMs += 3_600_000
    browser.setCookie(login, 'cs_oidc_flow', `${Buffer.from(JSON.stringify(altered)).toString('base64url')}.${signature}`)
    const tampered = await browser.request(callback)
    assert.equal(tampered.status, 400)
    assert.match(JSON.parse(tampered.body).error, /Sign-in expired or was started in another browser/)

    const late = newBrowser()
    const lateCallback = await late.signInAtProvider(login, 'alice', isCallback)
    t.clock.advance(10 * 60_000)
    const response = await late.request(lateCallback)
    assert.equal(response.status, 400)
    assert.match(JSON.parse(response.body).error, /Sign-in expired/)
  })

  it('refuses an ID token for another nonce, and a code redeemed with another PKCE verifier', async () => {
    const key = deriveStateKey(t.service.ctx.serverSecret, 'oidc-flow')
    for (const [field, reason] of [
      ['nonce', /^Sign-in failed: .*nonce/],
      ['codeVerifier', /^Sign-in failed: the provider refused the authorization code/],
    ] as const) {
      const browser = newBrowser()
      const callback = await browser.signInAtProvider(login, 'alice', isCallback)
      // What a server that forgot the flow's values would hold: everything right but one.
      const flow = openState(key, browser.cookie(login, 'cs_oidc_flow') as string, t.clock.now()) as Record<string, string>
      const forged = { ...flow, [field]: 'x'.repeat(43) }
      browser.setCookie(login, 'cs_oidc_flow', sealState(key, forged, t.clock.now() + 60_000))
      const response = await browser.request(callback)
      assert.equal(response.status, 400, field)
      assert.match(JSON.parse(response.body).error, reason)
      assert.equal(browser.cookie(login, 'cs_session'), undefined)
    }
  })

  it('a sign-in cancelled at the provider ends in a 400 that says so', async () => {
    const browser = newBrowser()
    const authorization = (await browser.request(login)).location as URL
    const interaction = (await browser.request(authorization)).location as URL
    assert.match(interaction.pathname, /^\/interaction\//)
    const callback = await browser.signInAtProvider(new URL(`${interaction.href}/abort`), 'alice', isCallback)
    assert.equal(callback.searchParams.get('error'), 'access_denied')
    const response = await browser.request(callback)
    assert.equal(response.status, 400)
    assert.match(JSON.parse(response.body).error, /^Sign-in failed: the provider answered access_denied/)
    assert.equal(browser.cookie(login, 'cs_session'), undefined)
  })

  it('answers a browser whose sign-in failed with a page that says why and starts again, not raw JSON', async () => {
    const html = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' }
    const browser = newBrowser()
    const authorization = (await browser.request(login)).location as URL
    const interaction = (await browser.request(authorization)).location as URL
    const callback = await browser.signInAtProvider(new URL(`${interaction.href}/abort`), 'alice', isCallback)
    const cancelled = await browser.request(callback, { headers: html })
    assert.equal(cancelled.status, 400)
    assert.match(cancelled.body, /<title>Sign-in did not complete · Countersign<\/title>/)
    assert.match(cancelled.body, /<p data-testid="sign-in-problem-reason">Sign-in failed: the provider answered access_denied/)
    assert.match(cancelled.body, /<a class="button" href="\/auth\/login">Start again<\/a>/)
    assert.doesNotMatch(cancelled.body, /<script/)
    assert.equal(browser.cookie(login, 'cs_session'), undefined)

    const expired = await newBrowser().request(callback, { headers: html })
    assert.equal(expired.status, 400)
    assert.match(expired.body, /Sign-in expired or was started in another browser/)

    const admin = await t.service.ctx.accounts.ensureLocalAdmin()
    const { token } = await t.service.ctx.sessions.createLoginToken(admin.id)
    const link = await newBrowser().request(new URL(`${PUBLIC_URL}/auth/local?token=${token}`), { headers: html })
    assert.equal(link.status, 404)
    assert.match(link.body, /<h1>Sign-in links are turned off on this server<\/h1>/)
    assert.match(link.body, /href="\/auth\/login">Sign in<\/a>/)
  })

  it('creates the account of an unverified email without taking the address', async () => {
    const browser = newBrowser()
    await browser.request(await browser.signInAtProvider(login, 'mallory', isCallback))
    const session = await sessionOf(browser)
    assert.equal(session.status, 200)
    assert.deepEqual(session.body.account, { id: session.body.account.id, email: null, name: 'Mallory' })
    const claimed = await t.service.ctx.storage.db.selectFrom('accounts').select('id').where('email', '=', 'victim@example.com').execute()
    assert.deepEqual(claimed, [])
  })

  it('turns local sign-in links off', async () => {
    const admin = await t.service.ctx.accounts.ensureLocalAdmin()
    const { token } = await t.service.ctx.sessions.createLoginToken(admin.id)
    const response = await newBrowser().request(new URL(`${PUBLIC_URL}/auth/local?token=${token}`))
    assert.equal(response.status, 404)
    assert.match(JSON.parse(response.body).error, /OpenID Connect is configured/)
  })
})

describe('dashboard sign-in with OpenID Connect under https', () => {
  const HTTPS_URL = 'https://countersign.example'
  const login = new URL(`${HTTPS_URL}/auth/login`)
  const isCallback = (url: URL) => url.href.startsWith(`${HTTPS_URL}/auth/callback`)
  let idp: TestIdentityProvider
  let t: TestService
  before(async () => {
    idp = await startIdentityProvider(`${HTTPS_URL}/auth/callback`, {
      alice: { email: 'alice@example.com', email_verified: true, name: 'Alice Example' },
      bob: { email: 'bob@example.com', email_verified: true, name: 'Bob' },
    })
    t = await startTestService('sqlite', {
      listen: true,
      env: { PUBLIC_URL: HTTPS_URL, OIDC_ISSUER: idp.issuer, OIDC_CLIENT_ID: idp.clientId, OIDC_CLIENT_SECRET: idp.clientSecret },
    })
  })
  after(async () => {
    await t.stop()
    await idp.stop()
  })

  it("a flow a sibling host plants in a visitor's browser (a cookie under the parent domain) signs the visitor in to nothing", async () => {
    // Bob, at evil.example next to countersign.example, signs in to his own account and stops before the callback.
    const bob = new TestBrowser({ [HTTPS_URL]: t.url })
    const callback = await bob.signInAtProvider(login, 'bob', isCallback)
    const bobsFlow = bob.cookie(login, '__Host-cs_oidc_flow') ?? (bob.cookie(login, '__Secure-cs_oidc_flow') as string)
    // From evil.example he can set, with Domain=example, any cookie but a __Host- one; then he sends alice to his callback.
    const alice = new TestBrowser({ [HTTPS_URL]: t.url })
    alice.setCookie(login, '__Secure-cs_oidc_flow', bobsFlow)
    alice.setCookie(login, 'cs_oidc_flow', bobsFlow)
    const response = await alice.request(callback)
    assert.equal(response.status, 400, 'alice is not signed in to bob’s account')
    assert.equal(alice.cookie(login, '__Host-cs_session'), undefined)
  })

  it('keeps the flow in a __Host- cookie: Secure, Path=/, no Domain', async () => {
    const start = await new TestBrowser({ [HTTPS_URL]: t.url }).request(login)
    assert.equal(start.status, 302)
    const flowCookie = parseSetCookie(start.setCookies[0])
    assert.equal(flowCookie.name, '__Host-cs_oidc_flow')
    assert.deepEqual(flowCookie.attributes, ['HttpOnly', 'Max-Age=600', 'Path=/', 'SameSite=Lax', 'Secure'])
  })

  it('signs in through its own flow cookie', async () => {
    const alice = new TestBrowser({ [HTTPS_URL]: t.url })
    const callback = await alice.signInAtProvider(login, 'alice', isCallback)
    const response = await alice.request(callback)
    assert.equal(response.status, 303, response.body)
    assert.ok(alice.cookie(login, '__Host-cs_session'))
  })
})

describe('dashboard sign-in with OpenID Connect limited to email domains (OIDC_ALLOWED_EMAIL_DOMAINS)', () => {
  let idp: TestIdentityProvider
  let t: TestService
  before(async () => {
    idp = await startIdentityProvider(REDIRECT_URI, {
      alice: { email: 'alice@Example.com', email_verified: true, name: 'Alice Example' },
      // As some providers send it: the claim as a string.
      carol: { email: 'carol@shop.example.org', email_verified: 'true', name: 'Carol' },
      dave: { email: 'dave@example.com', email_verified: 'false', name: 'Dave' },
      eve: { email: 'eve@elsewhere.example', email_verified: true, name: 'Eve' },
      mallory: { email: 'mallory@example.com', email_verified: false, name: 'Mallory' },
      sub: { email: 'sam@dev.example.com', email_verified: true, name: 'Sam' },
      nobody: { name: 'No Email' },
    })
    t = await startTestService('sqlite', {
      listen: true,
      env: {
        PUBLIC_URL,
        OIDC_ISSUER: idp.issuer,
        OIDC_CLIENT_ID: idp.clientId,
        OIDC_CLIENT_SECRET: idp.clientSecret,
        OIDC_ALLOWED_EMAIL_DOMAINS: 'example.com, Shop.Example.org',
      },
    })
  })
  after(async () => {
    await t.stop()
    await idp.stop()
  })

  const signInAs = async (user: string, headers: Record<string, string> = {}) => {
    const browser = new TestBrowser({ [PUBLIC_URL]: t.url })
    const login = new URL(`${PUBLIC_URL}/auth/login`)
    const callback = await browser.signInAtProvider(login, user, (url) => url.href.startsWith(REDIRECT_URI))
    const response = await browser.request(callback, { headers })
    return { response, session: browser.cookie(login, 'cs_session') }
  }
  const accounts = () => t.service.ctx.storage.db.selectFrom('accounts').select('subject').execute()

  it('signs in an account whose verified address is at an allowed domain, in any case', async () => {
    for (const user of ['alice', 'carol']) {
      const { response, session } = await signInAs(user)
      assert.equal(response.status, 303, `${user}: ${response.body}`)
      assert.ok(session)
    }
  })

  it('refuses anyone else of the issuer, with a 403 and no account: another domain, a subdomain, an unverified or no address', async () => {
    for (const user of ['eve', 'sub', 'mallory', 'dave', 'nobody']) {
      const { response, session } = await signInAs(user)
      assert.equal(response.status, 403, user)
      assert.match(JSON.parse(response.body).error, /^This account may not sign in to this service/)
      assert.equal(session, undefined)
    }
    const { response, session } = await signInAs('eve', { accept: 'text/html' })
    assert.equal(response.status, 403)
    assert.match(response.body, /<h1>This account may not sign in here<\/h1>/)
    assert.match(response.body, /verified by the provider, at a domain the operator allows/)
    assert.equal(session, undefined)
    assert.deepEqual((await accounts()).map((row) => row.subject).sort(), ['alice', 'carol'])
  })
})
