// Fresh databases for tests: a new SQLite file or a new PostgreSQL database per test service, so that
// test files run in isolation. PostgreSQL tests skip when no server answers, unless REQUIRE_POSTGRES=1.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe } from 'node:test'
import pg from 'pg'

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

export async function createTestDatabase(dialect: TestDialect): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'countersign-test-'))
    return { url: `sqlite:${join(dir, 'test.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) }
  }
  const name = `countersign_test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  const url = new URL(POSTGRES_ADMIN_URL)
  url.pathname = `/${name}`
  return {
    url: url.href,
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
