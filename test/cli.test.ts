import assert from 'node:assert/strict'
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { type AddressInfo, connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { createTestDatabase, forEachDatabase, POSTGRES_ADMIN_URL, postgresSkip, type TestDatabase } from './support/databases.js'
import { CLI } from './support/serve-process.js'

const run = promisify(execFile)

forEachDatabase('countersign CLI', (dialect) => {
  let database: TestDatabase
  let env: NodeJS.ProcessEnv
  before(async () => {
    // Empty: `countersign migrate` is tested on a database it has to migrate.
    database = await createTestDatabase(dialect, { empty: true })
    env = { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'warn' }
  })
  after(() => database.drop())

  const countersign = (...args: string[]) => run(process.execPath, [...CLI, ...args], { env })

  it('migrates, creates a project with --json, and moves it to another plan', async () => {
    assert.match((await countersign('migrate')).stdout, /up to date/)
    const { stdout } = await countersign('project', 'create', '--name', 'shop', '--plan', 'pro', '--json')
    const project = JSON.parse(stdout)
    assert.deepEqual(Object.keys(project).sort(), ['apiKey', 'id', 'name', 'plan'])
    assert.match(project.id, /^proj_/)
    assert.equal(project.name, 'shop')
    assert.equal(project.plan, 'pro')
    assert.match(project.apiKey, /^cs_[A-Za-z0-9_-]{43}$/)
    assert.match((await countersign('project', 'set-plan', project.id, 'free')).stdout, /now on the free plan/)
  })

  it('refuses bad arguments with a clear message and exit code 2', async () => {
    for (const args of [
      ['project', 'create'],
      ['project', 'create', '--name', 'x', '--plan', 'gold'],
      ['project', 'set-plan', 'proj_nope', 'pro'],
      ['frobnicate'],
    ]) {
      await assert.rejects(countersign(...args), (error: { code: number; stderr: string }) => {
        assert.equal(error.code, 2, args.join(' '))
        assert.match(error.stderr, /^countersign: /)
        return true
      })
    }
  })

  it('refuses an --email the mailer would not send to (a list, a display name, a header), as it does any other bad address', async () => {
    for (const email of ['ops,billing@acme.example', 'ops;billing@acme.example', 'Ops <ops@acme.example>', 'not-an-address']) {
      await assert.rejects(
        countersign('project', 'create', '--name', 'listed', '--email', email),
        (error: { code: number; stderr: string }) => {
          assert.equal(error.code, 2, email)
          assert.match(error.stderr, /^countersign: --email must be one email address, got /, email)
          return true
        },
      )
    }
    const { stdout } = await countersign('project', 'create', '--name', 'mailed', '--email', 'ops@acme.example', '--json')
    assert.equal(JSON.parse(stdout).name, 'mailed')
  })

  it('login-link starts its link with PUBLIC_URL, or http://localhost:$PORT, as serve does', async () => {
    const withEnv = (extra: Record<string, string>) => run(process.execPath, [...CLI, 'login-link'], { env: { ...env, ...extra } })
    assert.match((await withEnv({ PORT: '4123' })).stdout, /^http:\/\/localhost:4123\/auth\/local\?token=\S+\n$/)
    assert.match(
      (await withEnv({ PORT: '4123', PUBLIC_URL: 'https://sign.shop.example' })).stdout,
      /^https:\/\/sign\.shop\.example\/auth\/local\?token=/,
    )
  })

  it('serve on an address already taken says which setting to check and exits 1, leaving nothing running', async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const { port } = taken.address() as AddressInfo
    try {
      for (const [settings, extra] of [
        ['HOST and PORT', { PORT: String(port) }],
        ['METRICS_HOST and METRICS_PORT', { PORT: '0', METRICS_PORT: String(port) }],
      ] as const) {
        // Killed hard after 20 s: an instance left running (workers, database connections) had ignored the first SIGTERM.
        const failed = await run(process.execPath, [...CLI, 'serve'], {
          env: { ...env, ...extra },
          timeout: 20_000,
          killSignal: 'SIGKILL',
        }).then(
          () => assert.fail('serve started on a taken address'),
          (error: { code: number | null; signal: string | null; stderr: string }) => error,
        )
        assert.equal(failed.signal, null, `${settings}: the process did not exit by itself`)
        assert.equal(failed.code, 1)
        assert.equal(
          failed.stderr,
          `countersign: cannot listen on 127.0.0.1:${port}: the address is in use (another process listens there); check ${settings}\n`,
        )
      }
    } finally {
      await new Promise((resolve) => taken.close(resolve))
    }
  })

  it('serve finishes an in-flight request on SIGTERM, then exits 0, with nothing on standard error', async () => {
    const { stdout } = await countersign('project', 'create', '--name', 'graceful', '--json')
    const { apiKey } = JSON.parse(stdout)
    const server: ChildProcess = spawn(process.execPath, [...CLI, 'serve'], {
      env: { ...env, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let errors = ''
    server.stderr!.on('data', (chunk) => {
      errors += chunk
    })
    let output = ''
    const port = await new Promise<number>((resolve, reject) => {
      server.stdout!.on('data', (chunk) => {
        output += chunk
        const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output)
        if (match) resolve(Number(match[1]))
      })
      server.once('exit', () => reject(new Error(`server exited early: ${output}`)))
    })
    const body = JSON.stringify({ type: 'connect' })
    const socket = connect(port, '127.0.0.1')
    let response = ''
    const continued = new Promise<void>((resolve) =>
      socket.on('data', (chunk) => {
        response += chunk
        if (response.startsWith('HTTP/1.1 100 Continue')) resolve()
      }),
    )
    const closed = new Promise((resolve) => socket.on('close', resolve))
    // Expect: 100-continue makes the server say when it holds the request: from then on it is in flight.
    socket.write(
      `POST /api/v1/payloads HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
    )
    await continued
    const exited = new Promise<number | null>((resolve) => server.once('exit', resolve))
    server.kill('SIGTERM')
    // Give the shutdown time to begin, then send the body of the request it must finish.
    await new Promise((resolve) => setTimeout(resolve, 300))
    socket.write(body)
    await closed
    response = response.slice(response.indexOf('\r\n\r\n') + 4)
    assert.match(response, /^HTTP\/1\.1 201 /)
    assert.equal(await exited, 0)
    // Nothing on standard error: no warning from Node or a library (a deprecated option) on the way up or down.
    assert.equal(errors, '')
  })
})

describe('countersign on a database it cannot open', () => {
  let dir: string
  let closedPort: number
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-unreachable-'))
    // A port nothing listens on: taken from the system, then let go.
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    closedPort = (server.address() as AddressInfo).port
    await new Promise((resolve) => server.close(resolve))
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('serve and every command that opens it say why in one line naming DATABASE_URL, exit 1, and leave no stack trace', async () => {
    const unknownDatabase = new URL(POSTGRES_ADMIN_URL)
    unknownDatabase.pathname = '/countersign_no_such_database'
    const cases: [string, string][] = [
      [`postgres://countersign@127.0.0.1:${closedPort}/countersign`, `connect ECONNREFUSED 127.0.0.1:${closedPort}`],
      // A directory where the database file should be.
      [`sqlite:${dir}`, 'unable to open database file'],
      // A port above 65535: the driver cannot read the URL.
      ['postgres://countersign:secret@127.0.0.1:99999/countersign', 'Invalid URL'],
      ...(postgresSkip ? [] : ([[unknownDatabase.href, 'database "countersign_no_such_database" does not exist']] as [string, string][])),
    ]
    const commands = [
      ['serve'],
      ['migrate'],
      ['project', 'create', '--name', 'shop'],
      ['project', 'set-plan', 'proj_x', 'pro'],
      ['login-link'],
    ]
    // Every command on the first; serve alone on the others (the commands open the database as it does).
    const runs = cases.flatMap(([databaseUrl, why], i) => (i === 0 ? commands : [['serve']]).map((args) => ({ databaseUrl, why, args })))
    await Promise.all(
      runs.map(async ({ databaseUrl, why, args }) => {
        const failed = await run(process.execPath, [...CLI, ...args], {
          env: { ...process.env, DATABASE_URL: databaseUrl, PORT: '0', LOG_LEVEL: 'warn' },
          timeout: 30_000,
          killSignal: 'SIGKILL',
        }).then(
          () => assert.fail(`${args.join(' ')} ran on ${databaseUrl}`),
          (error: { code: number | null; signal: string | null; stdout: string; stderr: string }) => error,
        )
        const what = `${args.join(' ')} on ${databaseUrl}`
        assert.equal(failed.signal, null, `${what}: the process did not exit by itself`)
        assert.equal(failed.code, 1, what)
        assert.equal(failed.stderr, `countersign: cannot open the database: ${why}; check DATABASE_URL\n`, what)
        assert.equal(failed.stdout, '', what)
      }),
    )
  })
})

describe('countersign help', () => {
  let dir: string
  let env: NodeJS.ProcessEnv
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-help-'))
    // Where the commands would put their database: it must still not exist after any of them asked for help.
    env = { ...process.env, DATABASE_URL: `sqlite:${join(dir, 'data', 'countersign.db')}`, PORT: '0', LOG_LEVEL: 'warn' }
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  const countersign = (...args: string[]) => run(process.execPath, [...CLI, ...args], { env })

  it('prints the usage of every command for help, COMMAND --help and -h, exits 0, and creates, starts or prints nothing else', async () => {
    const commands = ['serve', 'migrate', 'project create', 'project set-plan', 'login-link', 'rotate-secret', 'help']
    const overall = (await countersign('help')).stdout
    for (const command of commands) assert.ok(overall.includes(`countersign ${command}`), `help lists ${command}`)
    assert.equal((await countersign('--help')).stdout, overall)
    assert.equal((await countersign('-h')).stdout, overall)

    for (const command of commands.filter((c) => c !== 'help')) {
      const words = command.split(' ')
      const outputs = await Promise.all([countersign(...words, '--help'), countersign(...words, '-h'), countersign('help', ...words)])
      for (const { stdout, stderr } of outputs) {
        assert.match(stdout, new RegExp(`^Usage: countersign ${command}`), command)
        assert.equal(stdout, outputs[0]?.stdout)
        assert.equal(stderr, '')
        assert.doesNotMatch(
          stdout,
          /listening on|auth\/local\?token=|Database schema is up to date|cs_[A-Za-z0-9_-]{43}/,
          `${command} --help does nothing`,
        )
      }
    }
    // Help wins over anything else on the line, even arguments that would be refused.
    assert.match((await countersign('project', 'create', '--bogus', 'value', '--help')).stdout, /^Usage: countersign project create/)
    assert.match((await countersign('project', '--help')).stdout, /countersign project create[\s\S]*countersign project set-plan/)
    assert.match((await countersign('project')).stdout, /countersign project create/)
    assert.deepEqual(readdirSync(dir), [], 'no data directory, no database')
  })

  it('refuses unknown options and extra arguments of every command, with the usage, and does nothing (no database either)', async () => {
    for (const args of [
      ['serve', '--port', '4000'],
      ['serve', 'now'],
      ['migrate', '--force'],
      ['login-link', '--email', 'a@b.example'],
      ['project', 'create', '--name', 'x', '--colour', 'red'],
      ['project', 'set-plan', 'proj_x', 'pro', 'extra'],
      ['project', 'set-plan', 'proj_x', 'pro', '--now'],
      // The last of the two had been taken: a Pro project, or one named "y", without a word.
      ['project', 'create', '--name', 'x', '--plan', 'free', '--plan', 'pro'],
      ['project', 'create', '--name', 'x', '--name=y'],
      ['rotate-secret', '--discard-unreadable', '--discard-unreadable'],
      ['project', 'rename'],
    ]) {
      await assert.rejects(countersign(...args), (error: { code: number; stderr: string; stdout: string }) => {
        assert.equal(error.code, 2, args.join(' '))
        assert.match(error.stderr, /^countersign: .+\n\nUsage:/, args.join(' '))
        assert.equal(error.stdout, '')
        return true
      })
    }
    assert.deepEqual(readdirSync(dir), [])
  })

  it('is an error for an unknown command, with the usage', async () => {
    for (const args of [
      ['frobnicate', '--help'],
      ['help', 'frobnicate'],
    ]) {
      await assert.rejects(countersign(...args), (error: { code: number; stderr: string }) => {
        assert.equal(error.code, 2)
        assert.match(error.stderr, /^countersign: .*frobnicate.*\n\nUsage: countersign <command>/)
        return true
      })
    }
    assert.deepEqual(readdirSync(dir), [])
  })

  it('without a command prints the usage and exits 2', async () => {
    await assert.rejects(countersign(), (error: { code: number; stdout: string }) => {
      assert.equal(error.code, 2)
      assert.match(error.stdout, /^Usage: countersign <command>/)
      return true
    })
  })
})
