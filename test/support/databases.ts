// Fresh databases for tests: a new SQLite file or a new PostgreSQL database per test service, so that
// test files run in isolation. PostgreSQL tests skip when no server answers, unless REQUIRE_POSTGRES=1.
//
// A fresh database is a copy of one already migrated (a file copied, or CREATE DATABASE ... TEMPLATE), made once for
// the current migrations and kept between runs: running every migration for every test service costs more than the
// copy. The service still migrates at start, and finds nothing to do. Tests of migrating itself ask for an empty one.
import { createHash, randomBytes } from 'node:crypto'
import { copyFileSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, mock } from 'node:test'
import { sql } from 'kysely'
import pg from 'pg'
import { type Db, openStorage } from '../../src/platform/db/database.js'
import { migrateToLatest } from '../../src/platform/db/migrations.js'

export type TestDialect = 'sqlite' | 'postgres'

export const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

/** A loaded machine can be slow to accept a connection: try a few times before calling PostgreSQL absent. */
async function postgresReachable(attempts = 3): Promise<boolean> {
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 5000 })
    try {
      await client.connect()
      await client.query('select 1')
      return true
    } catch {
      if (attempt === attempts) return false
    } finally {
      await client.end().catch(() => {})
    }
  }
  return false
}

const sqliteOnly = process.env.TEST_DATABASES === 'sqlite'
const postgresAvailable = sqliteOnly ? false : await postgresReachable()
if (!sqliteOnly && !postgresAvailable && process.env.REQUIRE_POSTGRES === '1') {
  throw new Error(`REQUIRE_POSTGRES=1 but PostgreSQL is not reachable at ${POSTGRES_ADMIN_URL}`)
}

/** The skip reason for a suite that needs PostgreSQL, or false when PostgreSQL answers. */
export const postgresSkip: string | false = sqliteOnly
  ? 'TEST_DATABASES=sqlite runs SQLite alone'
  : postgresAvailable
    ? false
    : 'PostgreSQL is not reachable (set REQUIRE_POSTGRES=1 to fail instead)'

/** TEST_DATABASES=sqlite (what `npm run test:quick` sets) declares the suites on SQLite alone. */
export const TEST_DIALECTS: TestDialect[] = sqliteOnly ? ['sqlite'] : ['sqlite', 'postgres']

/** Declares the suite once per database; the PostgreSQL one is skipped (not failed) when PostgreSQL is absent and not required. */
export function forEachDatabase(name: string, suite: (dialect: TestDialect) => void): void {
  for (const dialect of TEST_DIALECTS) {
    describe(`${name} [${dialect}]`, { skip: dialect === 'postgres' ? postgresSkip : false }, () => suite(dialect))
  }
}

/** Declares a suite that only makes sense on PostgreSQL (several processes, outages, row locks). */
export function describePostgres(name: string, suite: () => void): void {
  describe(`${name} [postgres]`, { skip: postgresSkip }, suite)
}

export interface TestDatabase {
  url: string
  drop(): Promise<void>
}

/** Names the migrated copies: a change to the migrations gives new ones instead of reusing stale ones. */
const MIGRATIONS_HASH = createHash('sha256')
  .update(readFileSync(new URL('../../src/platform/db/migrations.ts', import.meta.url)))
  .digest('hex')
  .slice(0, 16)

/** One key for every test process on the server: whoever holds it is the one that may build a template. */
const TEMPLATE_LOCK_KEY = 'countersign test database template'

let postgresTemplate: Promise<string> | undefined

/**
 * The name of a PostgreSQL database holding the current migrations, built by the first test process that needs it.
 * It is built under another name and renamed when complete, under an advisory lock, so that concurrent test
 * processes wait for it instead of copying a half-migrated one, and one that died building it leaves nothing used.
 */
function migratedPostgresTemplate(): Promise<string> {
  postgresTemplate ??= (async () => {
    const name = `countersign_template_${MIGRATIONS_HASH}`
    const building = `${name}_building`
    const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL })
    await admin.connect()
    try {
      await admin.query('SELECT pg_advisory_lock(hashtext($1))', [TEMPLATE_LOCK_KEY])
      const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
      if (found.rowCount === 0) {
        await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`)
        await admin.query(`CREATE DATABASE ${building}`)
        const storage = openStorage(postgresUrl(building))
        try {
          await migrateToLatest(storage)
        } finally {
          await storage.close()
        }
        await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`)
      }
    } finally {
      // Ending the session releases the lock.
      await admin.end()
    }
    return name
  })()
  return postgresTemplate
}

/**
 * The path of a SQLite file holding the current migrations, in the temporary directory. Test processes that build
 * it at the same time each write a file of their own and rename it into place: the result is the same either way.
 */
async function migratedSqliteTemplate(): Promise<string> {
  const path = join(tmpdir(), `countersign-template-${MIGRATIONS_HASH}.db`)
  if (existsSync(path)) return path
  const dir = mkdtempSync(join(tmpdir(), 'countersign-template-'))
  try {
    const storage = openStorage(`sqlite:${join(dir, 'template.db')}`)
    try {
      await migrateToLatest(storage)
    } finally {
      // Closing the last connection checkpoints the write-ahead log into the file: the file alone is the database.
      await storage.close()
    }
    renameSync(join(dir, 'template.db'), path)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  return path
}

function postgresUrl(database: string): string {
  const url = new URL(POSTGRES_ADMIN_URL)
  url.pathname = `/${database}`
  return url.href
}

/**
 * A database of its own for a test: migrated unless `empty` (for tests of migrating a new database), and dropped
 * with drop().
 */
export async function createTestDatabase(dialect: TestDialect, options: { empty?: boolean } = {}): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'countersign-test-'))
    const path = join(dir, 'test.db')
    if (!options.empty) copyFileSync(await migratedSqliteTemplate(), path)
    return { url: `sqlite:${path}`, drop: async () => rmSync(dir, { recursive: true, force: true }) }
  }
  const template = options.empty ? undefined : await migratedPostgresTemplate()
  const name = `countersign_test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL })
  await admin.connect()
  try {
    await admin.query(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  return {
    url: postgresUrl(name),
    drop: async () => {
      const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL })
      await client.connect()
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      } finally {
        await client.end()
      }
    },
  }
}

/** The text of each statement sent to PostgreSQL while `run` runs (none on SQLite). */
export async function statementsDuring<T>(run: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const statements: string[] = []
  const query = pg.Client.prototype.query
  const counted = mock.method(pg.Client.prototype, 'query', function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as string | { text?: string }
    statements.push(typeof config === 'string' ? config : (config.text ?? ''))
    return (query as (...a: unknown[]) => unknown).apply(this, args)
  })
  try {
    return { result: await run(), statements }
  } finally {
    counted.mock.restore()
  }
}

/**
 * Makes every update of one payload's row fail while `run` runs, as an error the code does not expect would (a trigger
 * raising: SQLite's SQLITE_CONSTRAINT_TRIGGER, PostgreSQL's P0001), neither the database away nor at a limit.
 */
export async function withPayloadUpdatesFailing<T>(db: Db, dialect: TestDialect, uuid: string, run: () => Promise<T>): Promise<T> {
  const name = sql.id(`fail_updates_${uuid.replaceAll('-', '_')}`)
  const row = sql.lit(uuid)
  if (dialect === 'sqlite') {
    await sql`CREATE TRIGGER ${name} BEFORE UPDATE ON payloads WHEN OLD.uuid = ${row} BEGIN SELECT RAISE(ABORT, 'injected failure'); END`.execute(
      db,
    )
  } else {
    await sql`CREATE OR REPLACE FUNCTION fail_update() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$`.execute(
      db,
    )
    await sql`CREATE TRIGGER ${name} BEFORE UPDATE ON payloads FOR EACH ROW WHEN (OLD.uuid = ${row}) EXECUTE FUNCTION fail_update()`.execute(
      db,
    )
  }
  try {
    return await run()
  } finally {
    await sql`DROP TRIGGER ${name}${dialect === 'postgres' ? sql` ON payloads` : sql``}`.execute(db)
  }
}
