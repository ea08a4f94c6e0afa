// Migrating a database that is not where this build left it: one a newer release migrated (a rollback, an older
// instance restarting during a rolling deploy), one another release migrated apart from this one, and one that
// several processes migrate at once.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { it } from 'node:test'
import { promisify } from 'node:util'
import { sql } from 'kysely'
import pg from 'pg'
import { openStorage, type Storage } from '../../../src/platform/db/database.js'
import { MigrationError, migrateToLatest, migrateUpTo } from '../../../src/platform/db/migrations.js'
import { createTestDatabase, describePostgres, forEachDatabase, POSTGRES_ADMIN_URL } from '../../support/databases.js'
import { CLI } from '../../support/serve-process.js'
import { bearer, startTestService } from '../../support/service.js'

const run = promisify(execFile)

const NEWER = '9999_from_a_newer_release'
/** What a release's migration leaves in the migration table. */
const recordMigration = (storage: Storage, name: string) =>
  sql`insert into kysely_migration (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(storage.db)

forEachDatabase('migrations', (dialect) => {
  it('run on a database a newer release migrated, as rolling deploys allow (every migration is additive)', async () => {
    const database = await createTestDatabase(dialect)
    const storage = openStorage(database.url)
    try {
      await recordMigration(storage, NEWER)
      // It had failed with "corrupted migrations: previously executed migration ... is missing".
      assert.deepEqual(await migrateToLatest(storage), [])
      assert.deepEqual(await migrateToLatest(storage), [])
      // The command says so, rather than only that the schema is up to date.
      const { stdout } = await run(process.execPath, [...CLI, 'migrate'], {
        env: { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'warn' },
      })
      assert.equal(
        stdout,
        `Database schema is up to date, and holds migrations of a newer release (${NEWER}): this release runs on it, as every migration is additive.\n`,
      )
    } finally {
      await storage.close()
      await database.drop()
    }
  })

  it('refuse, naming both, a database another release migrated that lacks migrations of this one', async () => {
    const database = await createTestDatabase(dialect, { empty: true })
    const storage = openStorage(database.url)
    try {
      const [first = ''] = await migrateUpTo(storage, '0001_initial')
      assert.equal(first, '0001_initial')
      await recordMigration(storage, NEWER)
      await assert.rejects(migrateToLatest(storage), (error: unknown) => {
        assert.ok(error instanceof MigrationError)
        assert.match(
          error.message,
          new RegExp(`^The database was migrated by another release \\(${NEWER}\\) and lacks migrations of this one \\(0002_`),
        )
        return true
      })
    } finally {
      await storage.close()
      await database.drop()
    }
  })
})

it('several processes migrating one new SQLite file at once all succeed, and the schema is whole', async () => {
  // SQLite has no migration lock: one of three had failed on "table accounts already exists" in 3 rounds of 8.
  for (let round = 0; round < 4; round++) {
    const database = await createTestDatabase('sqlite', { empty: true })
    const storages = [openStorage(database.url), openStorage(database.url), openStorage(database.url)]
    try {
      const applied = await Promise.all(storages.map((storage) => migrateToLatest(storage)))
      const names = applied.flat()
      assert.equal(new Set(names).size, names.length, 'each migration applied once')
      assert.deepEqual(await migrateToLatest(storages[0] as Storage), [])
    } finally {
      await Promise.all(storages.map((storage) => storage.close()))
      await database.drop()
    }
  }
})

describePostgres('the signer index built ahead (docs/deployment.md, migration 0017)', () => {
  const indexState = async (storage: Storage) =>
    (
      await sql<{ indisvalid: boolean }>`select i.indisvalid from pg_index i join pg_class c on c.oid = i.indexrelid
        where c.relname = 'payloads_project_signer'`.execute(storage.db)
    ).rows.map((row) => row.indisvalid)
  const BUILD_AHEAD = sql`create index concurrently if not exists payloads_project_signer
    on payloads (project_id, signer_address, created_at, uuid) where signer_address is not null`

  it('is kept when the build ahead completed', async () => {
    const database = await createTestDatabase('postgres', { empty: true })
    const storage = openStorage(database.url)
    try {
      await migrateUpTo(storage, '0016_validated_tx_hash')
      await BUILD_AHEAD.execute(storage.db)
      assert.deepEqual(await migrateToLatest(storage), ['0017_payloads_signer_search'])
      assert.deepEqual(await indexState(storage), [true])
    } finally {
      await storage.close()
      await database.drop()
    }
  })

  it('is built again when the build ahead failed and left an invalid index, which no search uses', async () => {
    const database = await createTestDatabase('postgres', { empty: true })
    const storage = openStorage(database.url)
    try {
      await migrateUpTo(storage, '0016_validated_tx_hash')
      await BUILD_AHEAD.execute(storage.db)
      // What a concurrent build cancelled or failed midway (a statement timeout, a lost connection) leaves behind.
      await sql`update pg_index set indisvalid = false where indexrelid = 'payloads_project_signer'::regclass`.execute(storage.db)
      assert.deepEqual(await migrateToLatest(storage), ['0017_payloads_signer_search'])
      assert.deepEqual(await indexState(storage), [true], 'a valid index, which the search by signer uses')
    } finally {
      await storage.close()
      await database.drop()
    }
  })
})

describePostgres('a PostgreSQL database dropped, then recreated empty, under a running instance', () => {
  it('is answered 503, never 500, and /readyz says so both times', async () => {
    const database = await createTestDatabase('postgres')
    const t = await startTestService('postgres', { databaseUrl: database.url })
    const name = new URL(database.url).pathname.slice(1)
    const admin = async (statement: string) => {
      const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL })
      await client.connect()
      try {
        await client.query(statement)
      } finally {
        await client.end()
      }
    }
    try {
      const { apiKey } = await t.createProject('pro')
      const create = () => t.inject({ method: 'POST', url: '/api/v1/payloads', headers: bearer(apiKey), payload: { type: 'connect' } })
      assert.equal((await create()).statusCode, 201)
      await admin(`DROP DATABASE ${name} WITH (FORCE)`)
      // The database is gone (3D000): it had been 500 on every request, and /readyz 503.
      for (let i = 0; i < 3; i++) assert.equal((await create()).statusCode, 503)
      assert.equal((await t.inject({ method: 'GET', url: '/readyz' })).statusCode, 503)
      // Recreated empty (42P01): every request had been 500 while /readyz answered 200.
      await admin(`CREATE DATABASE ${name}`)
      const response = await create()
      assert.equal(response.statusCode, 503, response.body)
      assert.ok(Number(response.headers['retry-after']) > 0)
      assert.equal((await t.inject({ method: 'GET', url: '/readyz' })).statusCode, 503)
    } finally {
      await t.stop()
      await database.drop()
    }
  })
})
