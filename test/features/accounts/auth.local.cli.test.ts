// The `countersign` commands of local sign-in, each its own process: what `npm run test:quick` leaves out.
import assert from 'node:assert/strict'
import { execFile, spawn, spawnSync } from 'node:child_process'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { localSignInUrl } from '../../../src/features/accounts/session-tokens.js'
import { TestBrowser } from '../../support/cookie-client.js'
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
    assert.match(invalid.stderr, /--email must be one email address, got "not-an-address"/)
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
