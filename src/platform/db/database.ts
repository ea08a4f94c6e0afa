// Opens the database named by DATABASE_URL: embedded SQLite (WAL) or PostgreSQL, behind one Kysely type.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, PostgresDialect, type SqliteDatabase, SqliteDialect, type Transaction } from 'kysely'
import pg from 'pg'
import { registerPostgresPool, registerSqliteConnection, type SqliteConnection } from './hot-query.js'
import type { Database } from './schema.js'

export type Db = Kysely<Database>
export type Tx = Transaction<Database>
export type DbOrTx = Db | Tx
export type Dialect = 'sqlite' | 'postgres'

export interface Storage {
  db: Db
  dialect: Dialect
  close(): Promise<void>
}

// int8 (bigint) columns hold epoch milliseconds and counters, well inside Number's exact range.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value))

export function openStorage(databaseUrl: string): Storage {
  if (databaseUrl.startsWith('sqlite:')) return openSqlite(databaseUrl.slice('sqlite:'.length))
  return openPostgres(databaseUrl)
}

function openSqlite(path: string): Storage {
  if (path !== ':memory:') createPrivately(resolve(path))
  const sqlite = new SQLite(path)
  sqlite.pragma('journal_mode = WAL')
  // WAL with synchronous=NORMAL is durable against process crashes; a power loss may lose the last commits.
  sqlite.pragma('synchronous = NORMAL')
  sqlite.pragma('foreign_keys = ON')
  sqlite.pragma('busy_timeout = 5000')
  const connection = withStatementCache(sqlite)
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: connection }) })
  registerSqliteConnection(db, connection)
  return { db, dialect: 'sqlite', close: () => db.destroy() }
}

/**
 * The database holds webhook secrets (sealed), sessions and API key hashes: only the service's own user may read it.
 * Directories it creates are 0700 and the database file is 0600 (SQLite gives its -wal and -shm files the
 * database file's mode). A file left readable by an earlier version is narrowed to 0600; an existing directory is
 * left as it is, as it may be shared (the working directory).
 */
function createPrivately(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600))
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    if (existsSync(file) && (statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600)
  }
}

const STATEMENT_CACHE_SIZE = 500

/**
 * Kysely prepares every query anew; better-sqlite3 statements are reusable, and the service runs a small set of
 * query shapes, so each SQL text is prepared once and kept. Kysely needs only prepare() and close() of the
 * database (hot queries also ask whether a transaction is open). Should the shapes ever outgrow the cache, it
 * starts afresh.
 */
function withStatementCache(sqlite: SQLite.Database): SqliteDatabase & SqliteConnection {
  const statements = new Map<string, SQLite.Statement>()
  return {
    prepare(sql: string) {
      let statement = statements.get(sql)
      if (!statement) {
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.clear()
        statement = sqlite.prepare(sql)
        statements.set(sql, statement)
      }
      return statement
    },
    close: () => sqlite.close(),
    get inTransaction() {
      return sqlite.inTransaction
    },
  }
}

function openPostgres(url: string): Storage {
  const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 5000 })
  // A client losing its connection (a database restart) must not crash the process: idle clients report through
  // the pool, checked-out ones through their own 'error' event; the query in flight fails and answers 503.
  pool.on('error', () => {})
  pool.on('connect', (client) => client.on('error', () => {}))
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  registerPostgresPool(db, pool)
  return { db, dialect: 'postgres', close: () => db.destroy() }
}
