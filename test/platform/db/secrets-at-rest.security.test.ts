// Attacks on secrets at rest: a copy of the database file alone must not open webhook secrets once the service
// runs as in production, and the SQLite file must not be readable by other users of the host.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { ConfigError, loadConfig } from '../../../src/config.js'
import {
  LOST_SECRET_REASON,
  rotateServerSecret,
  SecretRotationError,
  ServerSecretMismatchError,
} from '../../../src/features/webhooks/rotate-server-secret.js'
import { startService } from '../../../src/main.js'
import { ManualClock } from '../../../src/platform/clock.js'
import { createSecretBox } from '../../../src/platform/crypto/secret-box.js'
import { openStorage } from '../../../src/platform/db/database.js'
import { migrateToLatest } from '../../../src/platform/db/migrations.js'
import { LOST_RESPONSE_MESSAGE } from '../../../src/platform/http/idempotency.js'
import { createLogger } from '../../../src/platform/logger.js'
import { createTestDatabase, forEachDatabase, type TestDatabase } from '../../support/databases.js'
import { CLI } from '../../support/serve-process.js'

const run = promisify(execFile)
const NEW_SECRET = 'the-new-session-secret-of-at-least-32-bytes'
/** What the rotation after NEW_SECRET moves to. */
const CURRENT_SECRET = 'the-next-session-secret-of-at-least-32-bytes'

async function countersign(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [...CLI, ...args], {
      env: { PATH: process.env.PATH, LOG_LEVEL: 'warn', ...env },
    })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string }
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
  }
}

describe('SESSION_SECRET in production', () => {
  it('is required with NODE_ENV=production, with a clear start-up error', async () => {
    assert.throws(
      () => loadConfig({ NODE_ENV: 'production' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError)
        assert.match(error.message, /^SESSION_SECRET is required when NODE_ENV=production: set it to at least 32 random bytes/)
        return true
      },
    )
    const serve = await countersign(['serve'], { NODE_ENV: 'production', DATABASE_URL: 'sqlite::memory:', PORT: '0' })
    assert.equal(serve.code, 2)
    assert.match(serve.stderr, /^countersign: SESSION_SECRET is required when NODE_ENV=production/)
  })

  it('must be at least 32 bytes, and the error does not repeat it', () => {
    for (const env of [{ SESSION_SECRET: 'short-but-not-empty' }, { NODE_ENV: 'production', SESSION_SECRET: 'x'.repeat(31) }]) {
      assert.throws(
        () => loadConfig(env),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError)
          assert.match(error.message, /^SESSION_SECRET must be at least 32 bytes, got \d+/)
          assert.equal(error.message.includes(env.SESSION_SECRET), false)
          return true
        },
      )
    }
    assert.equal(loadConfig({ NODE_ENV: 'production', SESSION_SECRET: 'x'.repeat(32) }).sessionSecret, 'x'.repeat(32))
  })
})

forEachDatabase('rotating the server secret', (dialect) => {
  let database: TestDatabase
  let sealed: { id: string; secret: string }
  /** The webhook's secret after a rotation through the API: the first one still signs beside it for 24 hours. */
  let rotatedSecret: string
  const creation = { method: 'POST' as const, url: '/api/v1/webhooks', payload: { url: 'http://127.0.0.1:9/hook' } }
  let apiKey: string
  before(async () => {
    database = await createTestDatabase(dialect)
    // The embedded quick start: no SESSION_SECRET, so the service generates one and keeps it in the database.
    const config = loadConfig({ DATABASE_URL: database.url, PUBLIC_URL: 'http://countersign.test', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' })
    const service = await startService(config, { clock: new ManualClock(), logger: createLogger('silent'), listen: false, workers: false })
    try {
      const { key } = await service.ctx.projects.createProject({ name: 'Shop', plan: 'pro' })
      apiKey = key.apiKey
      // Created with an Idempotency-Key, whose kept response (the webhook and its secret) is sealed too.
      const response = await service.app.inject({
        ...creation,
        headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': 'create-the-hook' },
      })
      assert.equal(response.statusCode, 201, response.body)
      sealed = response.json()
      const rotated = await service.app.inject({
        method: 'POST',
        url: `/api/v1/webhooks/${sealed.id}/rotate-secret`,
        headers: { authorization: `Bearer ${apiKey}` },
      })
      assert.equal(rotated.statusCode, 200, rotated.body)
      rotatedSecret = rotated.json().secret
    } finally {
      await service.stop()
    }
  })
  after(() => database.drop())

  async function databaseContents() {
    const storage = openStorage(database.url)
    try {
      const settings = await storage.db.selectFrom('settings').selectAll().execute()
      const webhooks = await storage.db.selectFrom('webhooks').select(['id', 'secret_ciphertext', 'previous_secret_ciphertext']).execute()
      const kept = await storage.db.selectFrom('idempotency_keys').select(['key', 'response_sealed']).execute()
      const sealedValues = [
        ...webhooks.flatMap((row) => [row.secret_ciphertext, row.previous_secret_ciphertext]),
        ...kept.map((row) => row.response_sealed),
      ].filter((value) => value !== null)
      return { settings, webhooks, sealedValues }
    } finally {
      await storage.close()
    }
  }

  /** What an attacker holding only the database can do: try every stored setting as the key. */
  function openWithDatabaseAlone(contents: Awaited<ReturnType<typeof databaseContents>>): string[] {
    const opened: string[] = []
    for (const { value } of contents.settings) {
      for (const sealedValue of contents.sealedValues) {
        try {
          opened.push(createSecretBox(value).open(sealedValue))
        } catch {}
      }
    }
    return opened
  }

  /** What the webhook's sealed values hold: its secret, the one its rotation replaced, the kept creation response. */
  const secretsIn = (opened: string[]) => opened.map((plain) => (plain.startsWith('{') ? JSON.parse(plain).secret : plain))

  it('before: the database alone opens the webhook secrets and the kept response (the quick start)', async () => {
    assert.deepEqual(secretsIn(openWithDatabaseAlone(await databaseContents())), [rotatedSecret, sealed.secret, sealed.secret])
  })

  it('`countersign rotate-secret` re-seals under SESSION_SECRET and removes the generated one, so the database alone opens nothing', async () => {
    const rotated = await countersign(['rotate-secret'], { DATABASE_URL: database.url, SESSION_SECRET: NEW_SECRET })
    assert.equal(rotated.code, 0, rotated.stderr)
    assert.match(
      rotated.stdout,
      /Re-sealed 1 webhook secret\(s\) under SESSION_SECRET \(0 already were\), and 1 response\(s\) kept with Idempotency-Keys\./,
    )
    assert.match(rotated.stdout, /The generated secret was removed from the database/)
    const contents = await databaseContents()
    assert.deepEqual(openWithDatabaseAlone(contents), [])
    assert.equal(
      contents.settings.some((row) => row.key === 'server_secret'),
      false,
    )
    const newBox = createSecretBox(NEW_SECRET)
    assert.deepEqual(secretsIn(contents.sealedValues.map((value) => newBox.open(value))), [rotatedSecret, sealed.secret, sealed.secret])

    // An instance on the new secret replays the kept response and signs with both secrets, as before the rotation.
    const config = loadConfig({ DATABASE_URL: database.url, SESSION_SECRET: NEW_SECRET, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' })
    const service = await startService(config, { clock: new ManualClock(), logger: createLogger('silent'), listen: false, workers: false })
    try {
      const replay = await service.app.inject({
        ...creation,
        headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': 'create-the-hook' },
      })
      assert.equal(replay.statusCode, 201, replay.body)
      assert.equal(replay.headers['idempotent-replayed'], 'true')
      assert.equal(replay.json().secret, sealed.secret)
    } finally {
      await service.stop()
    }

    // Run again: nothing left to re-seal, and it says so.
    const again = await countersign(['rotate-secret'], {
      DATABASE_URL: database.url,
      SESSION_SECRET: NEW_SECRET,
      OLD_SESSION_SECRET: NEW_SECRET,
    })
    assert.equal(again.code, 0, again.stderr)
    assert.match(again.stdout, /Re-sealed 0 webhook secret\(s\) under SESSION_SECRET \(1 already were\), and 0 response\(s\)/)
  })

  it('refuses a wrong OLD_SESSION_SECRET and changes nothing; the right one rotates on', async () => {
    const before = await databaseContents()
    const wrong = await countersign(['rotate-secret'], {
      DATABASE_URL: database.url,
      SESSION_SECRET: CURRENT_SECRET,
      OLD_SESSION_SECRET: 'not-the-secret-it-ran-with-but-32-bytes-long',
    })
    assert.equal(wrong.code, 2)
    assert.match(wrong.stderr, /opens under neither the old nor the new secret; nothing was changed/)
    assert.deepEqual(await databaseContents(), before)

    const right = await countersign(['rotate-secret'], {
      DATABASE_URL: database.url,
      SESSION_SECRET: CURRENT_SECRET,
      OLD_SESSION_SECRET: NEW_SECRET,
    })
    assert.equal(right.code, 0, right.stderr)
    const nextBox = createSecretBox(CURRENT_SECRET)
    assert.deepEqual(secretsIn((await databaseContents()).sealedValues.map((value) => nextBox.open(value))), [
      rotatedSecret,
      sealed.secret,
      sealed.secret,
    ])
  })

  it('refuses to run without SESSION_SECRET, or without any old secret to rotate from', async () => {
    const noNew = await countersign(['rotate-secret'], { DATABASE_URL: database.url })
    assert.equal(noNew.code, 2)
    assert.match(noNew.stderr, /Set SESSION_SECRET to the new secret/)
    const noOld = await countersign(['rotate-secret'], { DATABASE_URL: database.url, SESSION_SECRET: NEW_SECRET })
    assert.equal(noOld.code, 2)
    assert.match(noOld.stderr, /No old secret: set OLD_SESSION_SECRET/)
  })

  // The secrets are now sealed under CURRENT_SECRET, the last rotation's.
  const start = (sessionSecret: string) =>
    startService(loadConfig({ DATABASE_URL: database.url, SESSION_SECRET: sessionSecret, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }), {
      clock: new ManualClock(),
      logger: createLogger('silent'),
      listen: false,
      workers: false,
    })

  it('an instance started with a SESSION_SECRET that is not the one its secrets are sealed under is refused, saying what to do', async () => {
    // One instance deployed with the secret from before the rotation: it would fail every delivery and answer 500 to
    // every replay of a kept response.
    await assert.rejects(start(NEW_SECRET), (error: unknown) => {
      assert.ok(error instanceof ServerSecretMismatchError)
      assert.match(
        error.message,
        new RegExp(`^The server secret does not open the secret of webhook ${sealed.id}, the newest: SESSION_SECRET is not`),
      )
      assert.match(error.message, /countersign rotate-secret/)
      assert.equal(error.message.includes(NEW_SECRET), false)
      return true
    })
    const serve = await countersign(['serve'], { DATABASE_URL: database.url, SESSION_SECRET: NEW_SECRET, PORT: '0' })
    assert.equal(serve.code, 2)
    assert.match(serve.stderr, /^countersign: The server secret does not open the secret of webhook/)

    // With the right one it starts, and replays the kept response.
    const service = await start(CURRENT_SECRET)
    try {
      const replay = await service.app.inject({
        ...creation,
        headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': 'create-the-hook' },
      })
      assert.equal(replay.statusCode, 201, replay.body)
    } finally {
      await service.stop()
    }
  })

  it('a lost secret: `rotate-secret --discard-unreadable` disables each webhook with a new secret, kept responses answer 409, and the service starts', async () => {
    const FINAL_SECRET = 'the-final-session-secret-of-at-least-32-bytes'
    const lost = await countersign(['rotate-secret'], { DATABASE_URL: database.url, SESSION_SECRET: FINAL_SECRET })
    assert.equal(lost.code, 2)
    assert.match(lost.stderr, /if it is lost, add --discard-unreadable/)
    const wrong = await countersign(['rotate-secret'], {
      DATABASE_URL: database.url,
      SESSION_SECRET: FINAL_SECRET,
      OLD_SESSION_SECRET: NEW_SECRET,
    })
    assert.equal(wrong.code, 2, 'without the flag, a secret that opens under neither stops the rotation')
    assert.match(wrong.stderr, /--discard-unreadable gives such webhooks new secrets/)

    const discarded = await countersign(['rotate-secret', '--discard-unreadable'], {
      DATABASE_URL: database.url,
      SESSION_SECRET: FINAL_SECRET,
    })
    assert.equal(discarded.code, 0, discarded.stderr)
    assert.match(discarded.stdout, new RegExp(`Discarded 1 webhook secret\\(s\\) that opened under neither secret: .* \\(${sealed.id}\\)`))
    assert.match(discarded.stdout, /Discarded 1 response\(s\) kept with Idempotency-Keys: a replay answers 409/)
    const contents = await databaseContents()
    assert.equal(contents.webhooks[0]?.previous_secret_ciphertext, null, 'the previous secret, unreadable, is dropped')
    const finalBox = createSecretBox(FINAL_SECRET)
    const secrets = secretsIn(contents.sealedValues.map((value) => finalBox.open(value)))
    assert.equal(secrets.includes(sealed.secret) || secrets.includes(rotatedSecret), false)

    const service = await start(FINAL_SECRET)
    try {
      const auth = { authorization: `Bearer ${apiKey}` }
      const replay = await service.app.inject({ ...creation, headers: { ...auth, 'idempotency-key': 'create-the-hook' } })
      assert.equal(replay.statusCode, 409, replay.body)
      assert.equal(replay.json().error, LOST_RESPONSE_MESSAGE)
      const [listed] = (await service.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers: auth })).json().webhooks
      assert.equal(listed.disabledReason, LOST_SECRET_REASON)
      // What its project does: rotate the secret (and so learn it), then enable the webhook.
      const rotated = await service.app.inject({ method: 'POST', url: `/api/v1/webhooks/${sealed.id}/rotate-secret`, headers: auth })
      assert.equal(rotated.statusCode, 200, rotated.body)
      const enabled = await service.app.inject({ method: 'POST', url: `/api/v1/webhooks/${sealed.id}/enable`, headers: auth })
      assert.ok(enabled.statusCode < 300, enabled.body)
    } finally {
      await service.stop()
    }
  })
})

forEachDatabase('a server secret in a mixed or lost state', (dialect) => {
  const S = 'the-session-secret-the-fleet-runs-with-32b'
  const NEXT = 'the-session-secret-to-rotate-to-of-32-bytes'
  let database: TestDatabase
  let apiKey: string
  const hooks: Array<{ id: string; secret: string }> = []
  const creation = (key: string) => ({
    method: 'POST' as const,
    url: '/api/v1/webhooks',
    payload: { url: `http://127.0.0.1:9/${key}` },
    headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': key },
  })
  const start = (sessionSecret?: string) =>
    startService(
      loadConfig({
        DATABASE_URL: database.url,
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        ...(sessionSecret !== undefined && { SESSION_SECRET: sessionSecret }),
      }),
      { clock: new ManualClock(), logger: createLogger('silent'), listen: false, workers: false },
    )
  /** Runs `task` on the database with a storage of its own. */
  async function onDatabase<T>(task: (storage: ReturnType<typeof openStorage>) => Promise<T>): Promise<T> {
    const storage = openStorage(database.url)
    try {
      return await task(storage)
    } finally {
      await storage.close()
    }
  }
  const sealedValues = () =>
    onDatabase(async ({ db }) => ({
      webhooks: await db.selectFrom('webhooks').select(['id', 'secret_ciphertext']).orderBy('id').execute(),
      kept: await db.selectFrom('idempotency_keys').select(['key', 'response_sealed']).orderBy('key').execute(),
      settings: await db.selectFrom('settings').select('key').execute(),
    }))

  before(async () => {
    database = await createTestDatabase(dialect)
    // The quick start (a generated secret), two webhooks created with keys: `a-first`, then `b-second`.
    const service = await start()
    try {
      apiKey = (await service.ctx.projects.createProject({ name: 'Shop', plan: 'pro' })).key.apiKey
      for (const key of ['a-first', 'b-second']) {
        const created = await service.app.inject(creation(key))
        assert.equal(created.statusCode, 201, created.body)
        hooks.push(created.json())
      }
    } finally {
      await service.stop()
    }
  })
  after(() => database.drop())

  it('a mistyped OLD_SESSION_SECRET with --discard-unreadable is refused on a mixed database too: what the generated secret opens says nothing of it', async () => {
    await onDatabase(({ db }) =>
      db
        .updateTable('webhooks')
        .set({ secret_ciphertext: createSecretBox(S).seal(hooks[1]!.secret) })
        .where('id', '=', hooks[1]!.id)
        .execute(),
    )
    const before = await sealedValues()
    await onDatabase(async ({ db }) => {
      await assert.rejects(rotateServerSecret(db, `${S}-mistyped`, NEXT, { discardUnreadable: true }), /OLD_SESSION_SECRET opens none/)
    })
    assert.deepEqual(await sealedValues(), before, 'the webhook S opens is not given up, the generated secret not removed')
  })

  it('values sealed under both the generated secret and SESSION_SECRET: a rotation with --discard-unreadable opens both, gives up none', async () => {
    // An instance of an earlier version, started with S while the generated secret was still there, sealed the second.
    const box = createSecretBox(S)
    await onDatabase(async ({ db }) => {
      await db
        .updateTable('webhooks')
        .set({ secret_ciphertext: box.seal(hooks[1]!.secret) })
        .where('id', '=', hooks[1]!.id)
        .execute()
      await db
        .updateTable('idempotency_keys')
        .set({ response_sealed: box.seal(JSON.stringify(hooks[1])) })
        .where('key', '=', 'b-second')
        .execute()
      const rotation = await rotateServerSecret(db, S, S, { discardUnreadable: true })
      assert.deepEqual([rotation.discardedSecrets, rotation.discardedResponses, rotation.resealed], [[], 0, 1])
    })
    const sealed = await sealedValues()
    const current = createSecretBox(S)
    assert.deepEqual(sealed.webhooks.map((row) => current.open(row.secret_ciphertext)).sort(), hooks.map((hook) => hook.secret).sort())
    assert.deepEqual(sealed.settings, [], 'the generated secret is gone, once nothing needs it')
  })

  it('a mistyped OLD_SESSION_SECRET with --discard-unreadable is refused, and changes nothing', async () => {
    const before = await sealedValues()
    await onDatabase(async ({ db }) => {
      await assert.rejects(
        rotateServerSecret(db, 'a-mistyped-old-secret-of-at-least-32-bytes', NEXT, { discardUnreadable: true }),
        (error) => {
          assert.ok(error instanceof SecretRotationError)
          assert.match(error.message, /OLD_SESSION_SECRET opens none of the sealed values/)
          return true
        },
      )
    })
    assert.deepEqual(await sealedValues(), before)
  })

  it('an older kept response that opens under no secret at hand: the rotation stops and says so; its replay is a 409, never a 500', async () => {
    // The first key's response, sealed by an instance configured apart from the rest; the newest (b-second) opens.
    const stray = createSecretBox('a-secret-one-instance-was-given-by-mistake')
    await onDatabase(({ db }) =>
      db
        .updateTable('idempotency_keys')
        .set({ response_sealed: stray.seal(JSON.stringify(hooks[0])) })
        .where('key', '=', 'a-first')
        .execute(),
    )
    const before = await sealedValues()
    await onDatabase(async ({ db }) => {
      await assert.rejects(rotateServerSecret(db, S, NEXT), (error) => {
        assert.ok(error instanceof SecretRotationError)
        assert.match(error.message, /The response kept with Idempotency-Key "a-first" .* opens under neither/)
        return true
      })
    })
    assert.deepEqual(await sealedValues(), before, 'nothing changed')

    const service = await start(S)
    try {
      const lost = await service.app.inject(creation('a-first'))
      assert.equal(lost.statusCode, 409, lost.body)
      assert.equal(lost.json().error, LOST_RESPONSE_MESSAGE)
      const replayed = await service.app.inject(creation('b-second'))
      assert.equal(replayed.statusCode, 201, replayed.body)
      assert.equal(replayed.json().secret, hooks[1]!.secret)
    } finally {
      await service.stop()
    }
  })

  it('an instance started without SESSION_SECRET on a database sealed under one is refused before it generates a secret; the commands run', async () => {
    await assert.rejects(start(), (error) => {
      assert.ok(error instanceof ServerSecretMismatchError)
      assert.match(
        error.message,
        /^SESSION_SECRET is not set, and the database holds values sealed under one \(the secret of webhook \S+, the newest\)/,
      )
      return true
    })
    assert.deepEqual((await sealedValues()).settings, [], 'no secret was generated: a later start with S is as before')
    // The command line's other commands seal nothing: a deploy's migrate without SESSION_SECRET (outside production) runs,
    // and none of them generates a secret into a database that runs under SESSION_SECRET.
    for (const command of [['migrate'], ['login-link']]) {
      const run = await countersign(command, { DATABASE_URL: database.url })
      assert.equal(run.code, 0, run.stderr)
    }
    assert.deepEqual((await sealedValues()).settings, [])
  })
})

describe('the SQLite database on disk', () => {
  let directory: string
  before(() => {
    directory = mkdtempSync(join(tmpdir(), 'countersign-modes-'))
  })
  after(() => rmSync(directory, { recursive: true, force: true }))

  const mode = (path: string) => statSync(path).mode & 0o777

  it('is created 0600 (and its -wal and -shm files), in a data directory created 0700', async () => {
    const path = join(directory, 'data', 'nested', 'countersign.db')
    const storage = openStorage(`sqlite:${path}`)
    await migrateToLatest(storage)
    try {
      assert.equal(mode(join(directory, 'data')).toString(8), '700')
      assert.equal(mode(join(directory, 'data', 'nested')).toString(8), '700')
      for (const file of [path, `${path}-wal`, `${path}-shm`]) assert.equal(mode(file).toString(8), '600', file)
    } finally {
      await storage.close()
    }
  })

  it('narrows a database file left readable by others to 0600 when opened', async () => {
    const path = join(directory, 'readable.db')
    writeFileSync(path, '')
    chmodSync(path, 0o644)
    const storage = openStorage(`sqlite:${path}`)
    await migrateToLatest(storage)
    await storage.close()
    assert.equal(mode(path).toString(8), '600')
  })

  it("leaves the mode of a directory or another program's file that DATABASE_URL names by mistake as it was", async () => {
    const shared = join(directory, 'shared')
    mkdirSync(shared)
    chmodSync(shared, 0o1777)
    const notes = join(directory, 'notes.txt')
    writeFileSync(notes, 'root:x:0:0:root:/root:/bin/bash\n')
    chmodSync(notes, 0o644)
    assert.throws(() => openStorage(`sqlite:${shared}`), { code: 'SQLITE_CANTOPEN' })
    assert.throws(() => openStorage(`sqlite:${notes}`), { code: 'SQLITE_NOTADB' })
    assert.equal((statSync(shared).mode & 0o7777).toString(8), '1777')
    assert.equal(mode(notes).toString(8), '644')
  })

  it('leaves the working directory as it was when opened on an empty path, which SQLite takes for a temporary database', async () => {
    const workingDirectory = join(directory, 'working')
    mkdirSync(workingDirectory, { mode: 0o755 })
    const before = process.cwd()
    process.chdir(workingDirectory)
    try {
      await openStorage('sqlite:').close()
    } finally {
      process.chdir(before)
    }
    assert.equal(mode(workingDirectory).toString(8), '755')
  })
})
