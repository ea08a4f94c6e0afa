// A process killed in the middle of a migration leaves the database as it was before that migration, and the next
// start applies it. On SQLite, each statement of a migration had been committed on its own: killed while 0016 updated
// a large payloads table, its column stayed without the migration's row, and every start after failed on "duplicate
// column name". PostgreSQL runs them in a transaction already, and rolls back the transaction of a connection that
// vanishes: the second test holds that.
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import Database from 'better-sqlite3'
import pg from 'pg'
import { openStorage } from '../../src/platform/db/database.js'
import { migrateUpTo } from '../../src/platform/db/migrations.js'
import { createTestDatabase, describePostgres, POSTGRES_ADMIN_URL } from '../support/databases.js'
import { CLI } from '../support/serve-process.js'

const run = promisify(execFile)
/** Enough payloads for 0016's update to hold the database's write lock for a while (about a second here). */
const PAYLOADS = 300_000
/** The write lock held this long without a break: a migration's long statement is running, not the migrator's own writes. */
const HELD_FOR_MS = 100

/** Whether another connection holds the database's write lock now. */
function writeLockHeld(probe: Database.Database): boolean {
  try {
    probe.exec('begin immediate')
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_BUSY') return true
    throw error
  }
  probe.exec('rollback')
  return false
}

it('SQLite: killed while a migration runs, the next start applies it whole', async () => {
  const database = await createTestDatabase('sqlite', { empty: true })
  const path = database.url.slice('sqlite:'.length)
  const storage = openStorage(database.url)
  await migrateUpTo(storage, '0015_follow_without_last_ledger')
  await storage.close()
  const probe = new Database(path, { timeout: 0 })
  try {
    probe.exec(`insert into projects (id, name, plan, created_at) values ('prj_1', 'Shop', 'pro', 0)`)
    probe.exec(`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${PAYLOADS})
      insert into payloads (uuid, project_id, type, status, expires_at, created_at, tx_hash, outcome)
      select 'uuid-' || i, 'prj_1', 'signAndSubmit', 'signed', 0, i, 'HASH' || i, 'succeeded' from n`)
    const env = { PATH: process.env.PATH ?? '', DATABASE_URL: database.url }

    const migrating = spawn(process.execPath, [...CLI, 'migrate'], { env, stdio: 'ignore' })
    const exited = once(migrating, 'exit')
    let heldSinceMs: number | null = null
    while (migrating.exitCode === null) {
      const nowMs = performance.now()
      if (!writeLockHeld(probe)) heldSinceMs = null
      else if (heldSinceMs === null) heldSinceMs = nowMs
      else if (nowMs - heldSinceMs >= HELD_FOR_MS) break
      await sleep(5)
    }
    migrating.kill('SIGKILL')
    const [code, signal] = await exited
    assert.equal(signal, 'SIGKILL', `killed while migrating, not after (exit code ${code})`)
    const migrated = () => probe.prepare(`select name from kysely_migration where name = '0016_validated_tx_hash'`).get()
    assert.equal(migrated(), undefined, 'the migration was not over')

    const { stdout } = await run(process.execPath, [...CLI, 'migrate'], { env })
    assert.equal(stdout, 'Database schema is up to date.\n')
    assert.ok(migrated())
    const row = probe.prepare(`select count(*) as n from payloads where validated_tx_hash = tx_hash`).get() as { n: number }
    assert.equal(row.n, PAYLOADS)
  } finally {
    probe.close()
    await database.drop()
  }
})

describePostgres('a migration killed on PostgreSQL', () => {
  it('leaves nothing of it, and the next start applies it whole', async () => {
    const database = await createTestDatabase('postgres', { empty: true })
    const storage = openStorage(database.url)
    await migrateUpTo(storage, '0015_follow_without_last_ledger')
    await storage.close()
    const client = new pg.Client({ connectionString: database.url })
    const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL })
    await client.connect()
    await admin.connect()
    try {
      await client.query(`insert into projects (id, name, plan, created_at) values ('prj_1', 'Shop', 'pro', 0)`)
      await client.query(`insert into payloads (uuid, project_id, type, status, expires_at, created_at, tx_hash, outcome)
        select 'uuid-' || i, 'prj_1', 'signAndSubmit', 'signed', 0, i, 'HASH' || i, 'succeeded' from generate_series(1, ${PAYLOADS}) i`)
      const env = { PATH: process.env.PATH ?? '', DATABASE_URL: database.url }

      const migrating = spawn(process.execPath, [...CLI, 'migrate'], { env, stdio: 'ignore' })
      const exited = once(migrating, 'exit')
      const name = new URL(database.url).pathname.slice(1)
      while (migrating.exitCode === null) {
        const running = await admin.query(
          `select 1 from pg_stat_activity where datname = $1 and state = 'active' and query like 'update payloads set validated_tx_hash%'`,
          [name],
        )
        if (running.rowCount) break
        await sleep(5)
      }
      migrating.kill('SIGKILL')
      const [code, signal] = await exited
      assert.equal(signal, 'SIGKILL', `killed while migrating, not after (exit code ${code})`)
      const column = () =>
        client.query(`select 1 from information_schema.columns where table_name = 'payloads' and column_name = 'validated_tx_hash'`)
      const migrated = () => client.query(`select 1 from kysely_migration where name = '0016_validated_tx_hash'`)
      // The server rolls the dead connection's transaction back once it notices the connection gone.
      for (let i = 0; i < 100 && (await column()).rowCount !== 0; i++) await sleep(50)
      assert.equal((await column()).rowCount, 0)
      assert.equal((await migrated()).rowCount, 0)

      const { stdout } = await run(process.execPath, [...CLI, 'migrate'], { env })
      assert.equal(stdout, 'Database schema is up to date.\n')
      assert.equal((await migrated()).rowCount, 1)
      const updated = await client.query<{ n: string }>(`select count(*) as n from payloads where validated_tx_hash = tx_hash`)
      assert.equal(Number(updated.rows[0]?.n), PAYLOADS)
    } finally {
      await client.end()
      await admin.end()
      await database.drop()
    }
  })
})
