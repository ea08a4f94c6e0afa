// Queries on the request path, compiled once instead of built on every call. Kysely builds and compiles a query
// from its operation tree each time it runs, which costs several times what SQLite takes to answer a point read;
// a hot query is built once per dialect with a marker in place of each parameter, and later calls only fill in
// the values. On the embedded SQLite database the compiled statement also runs synchronously on the connection,
// which skips Kysely's connection hand-over: inside a transaction (which holds the one connection), or outside
// one when no transaction holds it. On PostgreSQL, outside a transaction, it is a prepared statement on the pool.
import type SQLite from 'better-sqlite3'
import { type Compilable, CompiledQuery, type DialectAdapter } from 'kysely'
import type { Db, DbOrTx } from './database.js'

const MARKER_PREFIX = '\u0000hot-query-parameter:'

/** An embedded database's one connection, with its statements prepared once per SQL text. */
export interface SqliteConnection {
  prepare(sql: string): SQLite.Statement
  readonly inTransaction: boolean
}

/** Keyed by the dialect's adapter, which a database shares with its transactions. */
const sqliteConnections = new WeakMap<DialectAdapter, SqliteConnection>()

/** A PostgreSQL pool's one method hot queries use: a named query is parsed and planned once per connection. */
export interface PostgresPool {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>
}

const postgresPools = new WeakMap<DialectAdapter, PostgresPool>()

/** Lets hot queries on `db` outside a transaction run as prepared statements on `pool`. Called by openStorage. */
export function registerPostgresPool(db: Db, pool: PostgresPool): void {
  postgresPools.set(db.getExecutor().adapter, pool)
}

let hotQueries = 0

/** Lets hot queries on `db` and its transactions run synchronously on `connection`. Called by openStorage. */
export function registerSqliteConnection(db: Db, connection: SqliteConnection): void {
  sqliteConnections.set(db.getExecutor().adapter, connection)
}

interface Compiled {
  sql: string
  /** For each positional parameter: the name of the value to put there, or a constant the builder wrote. */
  slots: Array<{ name: string } | { constant: unknown }>
}

/**
 * A query built by `build` from named parameters. `build` must read each parameter by name and pass it straight
 * through as a value (a comparison operand, an inserted or updated value), never inspect or spread it: it is
 * called once, with markers in place of the values. Unlike Kysely, which leaves an undefined column out, a
 * parameter left undefined is bound as NULL; keep parameters required. Compiled SQL is kept per dialect adapter,
 * which a database shares with its transactions and with `withPlugin`/`withSchema` copies: do not run a hot query
 * on such a copy. As with Kysely, a transaction is used only inside its callback: on SQLite a hot query cannot tell a
 * finished transaction from a live one while another transaction holds the connection.
 */
export class HotQuery<Params extends Record<string, unknown>, Row> {
  /** Keyed by the dialect's adapter, which a database and its transactions share. */
  private readonly compiled = new WeakMap<DialectAdapter, Compiled>()
  /** The prepared statement's name on PostgreSQL connections. */
  private readonly name = `hot-query-${++hotQueries}`

  constructor(private readonly build: (db: DbOrTx, params: Params) => Compilable<Row>) {}

  /** The rows the query returns (none for a statement without RETURNING). */
  async execute(db: DbOrTx, params: Params): Promise<Row[]> {
    const adapter = db.getExecutor().adapter
    const { sql, slots } = this.compiledFor(adapter, db)
    const values = slots.map((slot) => ('name' in slot ? params[slot.name] : slot.constant))
    const sqlite = sqliteConnections.get(adapter)
    if (sqlite && db.isTransaction) {
      // A transaction holds the one connection until it ends, so its statements may run on it directly. Kysely refuses
      // a transaction used after it ended; so does this, as the connection may by then be another caller's.
      if (!sqlite.inTransaction) throw new Error('Transaction is already committed or rolled back')
      return runOnSqlite(sqlite, sql, values)
    }
    // Outside a transaction, directly only while no transaction holds the connection (its statements would otherwise
    // take this one in).
    if (sqlite && !sqlite.inTransaction) return runOnSqlite(sqlite, sql, values)
    // On PostgreSQL outside a transaction: prepared once per pooled connection, then only bound and executed (Kysely
    // sends an unnamed statement, parsed and planned every time).
    const pool = db.isTransaction ? undefined : postgresPools.get(adapter)
    if (pool) return (await pool.query({ name: this.name, text: sql, values })).rows as Row[]
    // Waiting for another transaction, or on PostgreSQL: through Kysely, on the transaction's connection or the pool's.
    return (await db.executeQuery<Row>(CompiledQuery.raw(sql, values))).rows
  }

  async executeTakeFirst(db: DbOrTx, params: Params): Promise<Row | undefined> {
    return (await this.execute(db, params))[0]
  }

  // getExecutor() is public in Kysely's types though documented as internal; the tests on both databases would catch
  // a release that changed it.
  private compiledFor(adapter: DialectAdapter, db: DbOrTx): Compiled {
    let compiled = this.compiled.get(adapter)
    if (!compiled) {
      compiled = compileWithMarkers(db, this.build)
      this.compiled.set(adapter, compiled)
    }
    return compiled
  }
}

function compileWithMarkers<Params extends Record<string, unknown>, Row>(
  db: DbOrTx,
  build: (db: DbOrTx, params: Params) => Compilable<Row>,
): Compiled {
  const seen = new Set<string>()
  const markers = new Proxy({} as Params, {
    get: (_target, name) => {
      if (typeof name !== 'string') return undefined
      seen.add(name)
      return `${MARKER_PREFIX}${name}`
    },
  })
  const query = build(db, markers).compile()
  const slots = query.parameters.map((value) =>
    typeof value === 'string' && value.startsWith(MARKER_PREFIX) ? { name: value.slice(MARKER_PREFIX.length) } : { constant: value },
  )
  const placed = new Set(slots.flatMap((slot) => ('name' in slot ? [slot.name] : [])))
  const lost = [...seen].filter((name) => !placed.has(name))
  if (lost.length > 0) throw new Error(`Hot query parameters ${lost.join(', ')} are not passed through as values`)
  return { sql: query.sql, slots }
}

function runOnSqlite<Row>(sqlite: SqliteConnection, sql: string, values: unknown[]): Row[] {
  const statement = sqlite.prepare(sql)
  if (statement.reader) return statement.all(values) as Row[]
  statement.run(values)
  return []
}
