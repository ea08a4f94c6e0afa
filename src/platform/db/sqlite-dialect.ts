// The embedded database's Kysely dialect: Kysely's SQLite adapter, compiler and introspector, with a driver of our
// own whose one connection keeps its prepared statements and runs hot queries (hot-query.ts).
import type SQLite from 'better-sqlite3'
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type Kysely,
  type Dialect as KyselyDialect,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely'
import { type CompiledHotQuery, compileHotQuery, type DirectRunner, HotQueryCall, type HotTemplate } from './hot-query.js'

export class SqliteStorageDialect implements KyselyDialect {
  #driver: SqliteStorageDriver | undefined

  constructor(private readonly database: SQLite.Database) {}

  createAdapter() {
    return new SqliteStorageAdapter()
  }

  createDriver(): Driver {
    this.#driver = new SqliteStorageDriver(this.database)
    return this.#driver
  }

  /** A hot query run at once, outside Kysely, when the connection is free (hot-query.ts, HotQuery.execute). */
  readonly runNow: DirectRunner = (template, params) => this.#driver?.runNow(template, params)

  createQueryCompiler() {
    return new SqliteQueryCompiler()
  }

  // biome-ignore lint/suspicious/noExplicitAny: Kysely's Dialect interface types the introspector's database so
  createIntrospector(db: Kysely<any>) {
    return new SqliteIntrospector(db)
  }
}

/**
 * Kysely puts a lock of its own around the connection when the adapter says that the dialect has no other (the one
 * use Kysely makes of this property); this driver lends its one connection itself instead, at once when it is free:
 * a hot read took 5.47 µs against 6.06 under Kysely's lock (docs/performance.md, "Hot queries").
 */
class SqliteStorageAdapter extends SqliteAdapter {
  override get supportsMultipleConnections(): boolean {
    return true
  }

  /**
   * SQLite runs schema changes in a transaction like any other write. Kysely's adapter says it does not, and its
   * migrator then commits each statement on its own: a process killed within a migration (between two of its statements,
   * or before the migration's row was written) left it half applied and unrecorded, and every later start failed on
   * what it had made ("duplicate column name"). Said so, the migrator applies the pending migrations and their rows in
   * one transaction: all of them, or none.
   */
  override get supportsTransactionalDdl(): boolean {
    return true
  }
}

/** One connection, lent to one caller at a time: a transaction holds it until it ends. */
class SqliteStorageDriver implements Driver {
  readonly #connection: SqliteStorageConnection
  #lent = false
  /** Callers waiting for the connection, first come first served; the connection passes straight to the next. */
  readonly #waiting: Array<() => void> = []

  constructor(private readonly database: SQLite.Database) {
    this.#connection = new SqliteStorageConnection(database)
  }

  async init(): Promise<void> {}

  /**
   * Runs a hot query on the connection now, synchronously, when no one holds it and no transaction is open on it: no
   * other statement can run in between, as none can while Kysely lends it. Undefined when it is held: the caller waits
   * its turn through Kysely.
   */
  runNow(template: HotTemplate, params: Readonly<Record<string, unknown>>): unknown[] | undefined {
    if (this.#lent || this.database.inTransaction) return undefined
    return this.#connection.runHot(template, params).rows
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.#lent) await new Promise<void>((resolve) => this.#waiting.push(resolve))
    else this.#lent = true
    return this.#connection
  }

  async releaseConnection(): Promise<void> {
    const next = this.#waiting.shift()
    if (next) next()
    else this.#lent = false
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin'))
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'))
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    // SQLite rolls a transaction back itself on some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM): a ROLLBACK then
    // fails with "no transaction is active", and would be thrown in place of the error that ended the transaction.
    if (this.database.inTransaction) await connection.executeQuery(CompiledQuery.raw('rollback'))
  }

  async destroy(): Promise<void> {
    this.database.close()
  }
}

const STATEMENT_CACHE_SIZE = 500

/**
 * Kysely's own SQLite driver prepares every query anew; better-sqlite3 statements are reusable, and the service runs
 * a small set of query shapes, so each SQL text is prepared once and kept. Should the shapes ever outgrow the cache,
 * it starts afresh. A hot query's statement is kept apart, by its template, and compiled for SQLite once.
 */
class SqliteStorageConnection implements DatabaseConnection {
  readonly #statements = new Map<string, SQLite.Statement>()
  readonly #hot = new WeakMap<HotTemplate, CompiledHotQuery & { statement: SQLite.Statement }>()
  readonly #compiler = new SqliteQueryCompiler()

  constructor(private readonly database: SQLite.Database) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (query instanceof HotQueryCall) return this.runHot(query.template, query.params)
    return run(this.#prepare(query.sql), query.parameters)
  }

  runHot<R>(template: HotTemplate, params: Readonly<Record<string, unknown>>): QueryResult<R> {
    const hot = this.#hotStatement(template)
    return run(hot.statement, hot.values(params))
  }

  // biome-ignore lint/correctness/useYield: the service streams no query; Kysely's interface asks for the method
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('Streaming queries is not supported')
  }

  #prepare(sql: string): SQLite.Statement {
    let statement = this.#statements.get(sql)
    if (!statement) {
      if (this.#statements.size >= STATEMENT_CACHE_SIZE) this.#statements.clear()
      statement = this.database.prepare(sql)
      this.#statements.set(sql, statement)
    }
    return statement
  }

  #hotStatement(template: HotTemplate): CompiledHotQuery & { statement: SQLite.Statement } {
    let hot = this.#hot.get(template)
    if (!hot) {
      const compiled = compileHotQuery(template, this.#compiler)
      hot = { ...compiled, statement: this.database.prepare(compiled.sql) }
      this.#hot.set(template, hot)
    }
    return hot
  }
}

// As Kysely's own SQLite connection answers.
function run<R>(statement: SQLite.Statement, parameters: readonly unknown[]): QueryResult<R> {
  if (statement.reader) return { rows: statement.all(parameters) as R[] }
  const { changes, lastInsertRowid } = statement.run(parameters)
  return { insertId: BigInt(lastInsertRowid), numAffectedRows: BigInt(changes), rows: [] }
}
