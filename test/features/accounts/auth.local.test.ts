import assert from 'node:assert/strict'
import { execFile, spawn, spawnSync } from 'node:child_process'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { localSignInUrl } from '../../../src/features/accounts/session-tokens.js'
import { TestBrowser } from '../../support/browser.js'
import { dashboardClient } from '../../support/dashboard.js'
import { createTestDatabase, forEachDatabase } from '../../support/databases.js'
import { CLI } from '../../support/serve-process.js'
import { startTestService, type TestService } from '../../support/service.js'

const PUBLIC_URL = 'http://countersign.test'
const MINUTE_MS = 60_000
const DAY_MS = 24 * 60 * MINUTE_MS

/** Runs the real `countersign` command with `env` as its whole configuration. */
async function countersign(args: string[], env: Record<string, string>) {
  const run = promisify(execFile)
  return run(process.execPath, [...CLI, ...args], { env: { PATH: process.env.PATH, PUBLIC_URL, ...env } }).then(
    ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  )
}

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

  it('the link `countersign login-link` prints signs the local admin in, once', async () => {
    const printed = await countersign(['login-link'], { DATABASE_URL: t.config.databaseUrl })
    assert.equal(printed.code, 0)
    assert.match(printed.stdout, /^http:\/\/countersign\.test\/auth\/local\?token=[\w-]{43}\n$/)
    const link = new URL(printed.stdout.trim())

    const browser = newBrowser()
    const first = await browser.request(link)
    assert.equal(first.status, 303)
    assert.equal(first.location?.href, `${PUBLIC_URL}/dashboard`)
    const session = await browser.request(sessionUrl)
    assert.equal(session.status, 200)
    const { account } = JSON.parse(session.body)
    assert.deepEqual(account, { id: account.id, email: null, name: 'Local admin' })
    const row = await t.service.ctx.storage.db.selectFrom('accounts').selectAll().where('id', '=', account.id).executeTakeFirstOrThrow()
    assert.deepEqual([row.issuer, row.subject], ['local', 'admin'])

    const again = await newBrowser().request(link)
    assert.equal(again.status, 401)
    assert.match(JSON.parse(again.body).error, /invalid, already used or expired/)
  })

  it('sets the session cookie HttpOnly, SameSite=Lax, on the whole site, for 30 days, not Secure over http', async () => {
    const response = await newBrowser().request(await freshLink())
    assert.deepEqual(response.setCookies.length, 1)
    assert.match(response.setCookies[0] as string, /^cs_session=[\w-]{43}; Path=\/; Max-Age=2592000; HttpOnly; SameSite=Lax$/)
    assert.equal(response.setCookies[0]?.includes('Secure'), false)
  })

  it('a link expires 15 minutes after it was made', async () => {
    const inTime = await freshLink()
    const late = await freshLink()
    t.clock.advance(15 * MINUTE_MS - 1)
    assert.equal((await newBrowser().request(inTime)).status, 303)
    t.clock.advance(1)
    assert.equal((await newBrowser().request(late)).status, 401)
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

  it('logout ends the session on the server, not only in the browser', async () => {
    const browser = await signIn()
    const token = browser.cookie(sessionUrl, 'cs_session') as string
    const logout = await browser.request(new URL(`${PUBLIC_URL}/auth/logout`), { method: 'POST', headers: { origin: PUBLIC_URL } })
    assert.equal(logout.status, 303)
    assert.match(logout.setCookies[0] as string, /^cs_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Lax$/)
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

  it('`countersign project create --email` gives the project to the local admin, with that address', async () => {
    const created = await countersign(['project', 'create', '--name', 'Operator shop', '--email', 'ops@example.com', '--json'], {
      DATABASE_URL: t.config.databaseUrl,
    })
    assert.equal(created.code, 0, created.stderr)
    const project = JSON.parse(created.stdout)
    const browser = await signIn()
    const session = JSON.parse((await browser.request(sessionUrl)).body)
    assert.equal(session.account.email, 'ops@example.com')
    const list = JSON.parse((await browser.request(new URL(`${PUBLIC_URL}/api/v1/projects`))).body)
    assert.ok(list.projects.some((p: { id: string; name: string }) => p.id === project.id && p.name === 'Operator shop'))

    const invalid = await countersign(['project', 'create', '--name', 'Shop', '--email', 'not-an-address'], {
      DATABASE_URL: t.config.databaseUrl,
    })
    assert.equal(invalid.code, 2)
    assert.match(invalid.stderr, /--email must be an email address/)
  })
})

it('`countersign login-link` refuses when OIDC is configured', async () => {
  const oidc = { OIDC_ISSUER: 'https://idp.example', OIDC_CLIENT_ID: 'countersign', OIDC_CLIENT_SECRET: 'secret' }
  const result = await countersign(['login-link'], { DATABASE_URL: 'sqlite::memory:', ...oidc })
  assert.equal(result.code, 2)
  assert.match(result.stderr, /OIDC is configured: sign in to the dashboard at \/auth\/login/)
  assert.equal(result.stdout, '')
})

/**
 * Starts `countersign serve` and reads its output up to the sign-in line. With `terminal`, standard output is a
 * pseudo-terminal (through util-linux `script`), as for a person running it by hand; otherwise a pipe, as under a
 * process manager that collects the output into logs.
 */
async function startServe(env: Record<string, string>, terminal: boolean, until = /Sign in:.*\n/) {
  const command = [process.execPath, ...CLI, 'serve']
  const options = { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'inherit'] as ('ignore' | 'pipe' | 'inherit')[] }
  const server = terminal
    ? spawn('script', ['-qec', command.map((part) => `'${part}'`).join(' '), '/dev/null'], options)
    : spawn(command[0]!, command.slice(1), options)
  const exited = new Promise((resolve) => server.once('exit', resolve))
  const stop = async () => {
    server.kill('SIGTERM')
    await exited
  }
  let output = ''
  try {
    await new Promise<void>((resolve, reject) => {
      server.stdout!.on('data', (chunk) => {
        output += String(chunk).replaceAll('\r', '')
        if (until.test(output)) resolve()
      })
      server.once('exit', () => reject(new Error(`serve exited early: ${output}`)))
    })
  } catch (error) {
    await stop()
    throw error
  }
  return { output, listening: /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] ?? '', stop }
}

const noScript = spawnSync('script', ['--version']).status === 0 ? false : 'util-linux `script` is not installed'

describe('`countersign serve` and the one-time sign-in link', () => {
  it('prints a link that works when standard output is a terminal', { skip: noScript }, async () => {
    const database = await createTestDatabase('sqlite')
    const serve = await startServe({ PUBLIC_URL, PORT: '0', DATABASE_URL: database.url, LOG_LEVEL: 'silent' }, true)
    try {
      const [, dashboard, link] = /Dashboard: (\S+)\n\s+Sign in:\s+(\S+)\n/.exec(serve.output) as unknown as [string, string, string]
      assert.equal(dashboard, `${PUBLIC_URL}/dashboard`)
      assert.match(link, /^http:\/\/countersign\.test\/auth\/local\?token=[\w-]{43}$/)
      const browser = new TestBrowser({ [PUBLIC_URL]: serve.listening })
      assert.equal((await browser.request(new URL(link))).status, 303)
      assert.equal((await browser.request(new URL(`${PUBLIC_URL}/api/v1/session`))).status, 200)
    } finally {
      await serve.stop()
      await database.drop()
    }
  })

  it('prints no link into a pipe (a log collector), only how to get one; and says where the generated secret is', async () => {
    const database = await createTestDatabase('sqlite')
    try {
      const env = { PUBLIC_URL, PORT: '0', DATABASE_URL: database.url, LOG_LEVEL: 'info' }
      const serve = await startServe(env, false, /Secrets:[\s\S]*rotate-secret/)
      await serve.stop()
      const output = serve.output
      assert.doesNotMatch(output, /token=/)
      assert.match(
        output,
        /Sign in: {3}run `countersign login-link` for a one-time link \(not printed: standard output is not a terminal\)/,
      )
      assert.match(output, /Secrets: {3}SESSION_SECRET is not set, so a generated one is kept in the database/)
    } finally {
      await database.drop()
    }
  })

  it('prints no link in production, even at a terminal', { skip: noScript }, async () => {
    const database = await createTestDatabase('sqlite')
    try {
      const env = {
        PUBLIC_URL,
        PORT: '0',
        DATABASE_URL: database.url,
        LOG_LEVEL: 'info',
        NODE_ENV: 'production',
        SESSION_SECRET: 'a-production-secret-of-at-least-32-bytes',
      }
      const serve = await startServe(env, true)
      await serve.stop()
      const output = serve.output
      assert.doesNotMatch(output, /token=/)
      assert.match(output, /run `countersign login-link` for a one-time link \(never printed in production\)/)
    } finally {
      await database.drop()
    }
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
    assert.match(
      response.headers['set-cookie'] as string,
      /^__Host-cs_session=[\w-]{43}; Path=\/; Max-Age=2592000; HttpOnly; SameSite=Lax; Secure$/,
    )
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
