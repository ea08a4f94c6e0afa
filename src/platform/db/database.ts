// Opens the database named by DATABASE_URL: embedded SQLite (WAL) or PostgreSQL, behind one Kysely type.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, type Transaction } from 'kysely'
import pg from 'pg'
import { runHotQueriesDirectly } from './hot-query.js'
import { PostgresStorageDialect } from './postgres-dialect.js'
import type { Database } from './schema.js'
import { SqliteStorageDialect } from './sqlite-dialect.js'

export type Db = Kysely<Database>
export type Tx = Transaction<Database>
export type DbOrTx = Db | Tx
export type Dialect = 'sqlite' | 'postgres'

export interface Storage {
  db: Db
  /** Which database: the embedded one has one connection and one writer, PostgreSQL a pool and row locks. */
  dialect: Dialect
  close(): Promise<void>
}

// int8 (bigint) columns hold epoch milliseconds and counters, well inside Number's exact range.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value))

/**
 * How long PostgreSQL lets one of the service's sessions sit idle inside a transaction before it ends the session, and
 * with it the transaction and its locks. The service's transactions wait between their statements only for the
 * process's own work, milliseconds; a transaction idle for longer belongs to an instance that froze or lost its network
 * in the middle of it. Its row locks (a project's month, a counter shard, a payload, an Idempotency-Key's claim) would
 * otherwise hold every other instance's requests for those rows, and then their connections, until the operating
 * system gave up on the connection: two hours by default.
 */
export const POSTGRES_IDLE_IN_TRANSACTION_TIMEOUT_MS = 10_000

export function openStorage(databaseUrl: string, options: { idleInTransactionTimeoutMs?: number } = {}): Storage {
  if (databaseUrl.startsWith('sqlite:')) return openSqlite(databaseUrl.slice('sqlite:'.length))
  return openPostgres(databaseUrl, options.idleInTransactionTimeoutMs ?? POSTGRES_IDLE_IN_TRANSACTION_TIMEOUT_MS)
}

function openSqlite(path: string): Storage {
  if (path !== ':memory:') createPrivately(resolve(path))
  const sqlite = new SQLite(path)
  try {
    // The first read of the file: a file that is not a database fails here, before narrowModes touches it.
    sqlite.pragma('journal_mode = WAL')
  } catch (error) {
    sqlite.close()
    throw error
  }
  if (path !== ':memory:') narrowModes(resolve(path))
  // WAL with synchronous=NORMAL is durable against process crashes; a power loss may lose the last commits.
  sqlite.pragma('synchronous = NORMAL')
  sqlite.pragma('foreign_keys = ON')
  sqlite.pragma('busy_timeout = 5000')
  // A 2 MB page cache instead of the 16 MB better-sqlite3 builds in: reads by uuid land anywhere in a file far larger
  // than either, so the operating system's page cache serves them; measured, the same processor time a request and
  // 17 MB less resident (docs/performance.md, "2026-11-24: memory after a million payloads").
  sqlite.pragma('cache_size = -2000')
  const dialect = new SqliteStorageDialect(sqlite)
  const db = new Kysely<Database>({ dialect })
  runHotQueriesDirectly(db, dialect.runNow)
  // Kysely destroys only a driver it has used: one that ran hot queries alone was never initialised by it.
  const close = async () => {
    await db.destroy()
    if (sqlite.open) sqlite.close()
  }
  return { db, dialect: 'sqlite', close }
}

/**
 * The database holds webhook secrets (sealed), sessions and API key hashes: only the service's own user may read it.
 * Directories it creates are 0700 and the database file is 0600 (SQLite gives its -wal and -shm files the
 * database file's mode). An existing directory is left as it is, as it may be shared (the working directory).
 */
function createPrivately(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600))
}

/**
 * A database file left readable by an earlier version is narrowed to 0600, once SQLite has read it as a database: a
 * DATABASE_URL naming a directory or a file of something else (`sqlite:/tmp`, `sqlite:/etc/passwd`) had had its mode
 * changed to 0600 before the start failed on it, leaving /tmp unusable by every other user of the host.
 */
function narrowModes(path: string): void {
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    // Files only: SQLite opens an empty path as a temporary database, and the path resolved to the working directory.
    const stat = existsSync(file) ? statSync(file) : undefined
    if (stat?.isFile() && (stat.mode & 0o077) !== 0) chmodSync(file, 0o600)
  }
}

/** How long a request waits for a pooled PostgreSQL connection before it fails as unavailable (503). */
const POOL_CONNECTION_TIMEOUT_MS = 5000

/**
 * How long a request may wait for its commit group to start (commit-groups.ts) before it fails as unavailable (503),
 * never written: on PostgreSQL as long as it would wait for a pooled connection, since the groups before it hold
 * theirs and may hang on a database that stopped answering. SQLite's one connection is in the process: no limit.
 */
export function groupWaitLimitMs(dialect: Dialect): number | undefined {
  return dialect === 'postgres' ? POOL_CONNECTION_TIMEOUT_MS : undefined
}

/**
 * A PostgreSQL host that vanishes without a word (the old primary of a failover, a partition, a host powered off): a
 * statement sent and acknowledged waits for an answer that never comes, and its connection has nothing to send, so
 * without TCP keepalive it waits for ever, the pooled connection and the request with it; ten such and the pool is
 * gone until a restart. With keepalive the operating system probes the server after this long without a byte, once
 * a second after that, and ends the connection after ten probes go unanswered (libuv's settings: strace shows
 * TCP_KEEPIDLE 10, TCP_KEEPINTVL 1 and TCP_KEEPCNT 10 on Node.js 22.12 and 24): the statement fails within about 20 s
 * and answers 503, and the pool opens new connections. A live server answers the probes from its kernel, whatever its
 * statements are doing. (Bytes the server never acknowledged are retransmitted instead, for the system's 15 minutes.)
 */
export const POSTGRES_KEEPALIVE_IDLE_MS = 10_000

function openPostgres(url: string, idleInTransactionTimeoutMs: number): Storage {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: POOL_CONNECTION_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: POSTGRES_KEEPALIVE_IDLE_MS,
    // Before the connection is handed out; should it fail, the connection is closed and whoever asked for it gets the
    // error, so that no session runs without the timeout. A SET rather than a startup option, which a connection
    // pooler in front (PgBouncer) may refuse.
    onConnect: async (client) => {
      await client.query(`set idle_in_transaction_session_timeout = ${Math.round(idleInTransactionTimeoutMs)}`)
    },
  })
  // A client losing its connection (a database restart) must not crash the process: idle clients report through
  // the pool, checked-out ones through their own 'error' event; the query in flight fails and answers 503.
  pool.on('error', () => {})
  pool.on('connect', (client) => client.on('error', () => {}))
  const db = new Kysely<Database>({ dialect: new PostgresStorageDialect(pool) })
  return { db, dialect: 'postgres', close: () => db.destroy() }
}
