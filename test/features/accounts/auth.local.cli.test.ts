// The `countersign` commands of local sign-in, each its own process: what `npm run test:quick` leaves out.
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { after, before, it } from 'node:test'
import { promisify } from 'node:util'
import { localSignInUrl } from '../../../src/features/accounts/session-tokens.js'
import { TestBrowser } from '../../support/browser.js'
import { createTestDatabase, forEachDatabase } from '../../support/databases.js'
import { CLI } from '../../support/serve-process.js'
import { startTestService, type TestService } from '../../support/service.js'

const PUBLIC_URL = 'http://countersign.test'

/** Runs the real `countersign` command with `env` as its whole configuration. */
async function countersign(args: string[], env: Record<string, string>) {
  const run = promisify(execFile)
  return run(process.execPath, [...CLI, ...args], { env: { PATH: process.env.PATH, PUBLIC_URL, ...env } }).then(
    ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  )
}

forEachDatabase('dashboard sign-in with local links, from the command line', (dialect) => {
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

it('`countersign serve` prints the dashboard and a sign-in link that works', async () => {
  const database = await createTestDatabase('sqlite')
  const server = spawn(process.execPath, [...CLI, 'serve'], {
    env: { PATH: process.env.PATH, PUBLIC_URL, PORT: '0', DATABASE_URL: database.url, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const exited = new Promise((resolve) => server.once('exit', resolve))
  try {
    let output = ''
    const printed = await new Promise<RegExpExecArray>((resolve, reject) => {
      server.stdout.on('data', (chunk) => {
        output += chunk
        const match = /listening on (http:\/\/127\.0\.0\.1:\d+)[\s\S]*Dashboard: (\S+)\n\s+Sign in:\s+(\S+)\n/.exec(output)
        if (match) resolve(match)
      })
      server.once('exit', () => reject(new Error(`serve exited early: ${output}`)))
    })
    const [, listening, dashboard, link] = printed as unknown as [string, string, string, string]
    assert.equal(dashboard, `${PUBLIC_URL}/dashboard`)
    assert.match(link, /^http:\/\/countersign\.test\/auth\/local\?token=[\w-]{43}$/)
    const browser = new TestBrowser({ [PUBLIC_URL]: listening })
    assert.equal((await browser.request(new URL(link))).status, 303)
    assert.equal((await browser.request(new URL(`${PUBLIC_URL}/api/v1/session`))).status, 200)
  } finally {
    server.kill('SIGTERM')
    await exited
    await database.drop()
  }
})
