// PostgreSQL's Kysely dialect: Kysely's PostgreSQL adapter, compiler and introspector, with a driver of our own (after
// Kysely's) whose connections run hot queries (hot-query.ts) as named prepared statements.
import {
  AbortedTransactionError,
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type Kysely,
  type Dialect as KyselyDialect,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely'
import type pg from 'pg'
import { type CompiledHotQuery, compileHotQuery, HotQueryCall, type HotTemplate } from './hot-query.js'

export class PostgresStorageDialect implements KyselyDialect {
  constructor(private readonly pool: pg.Pool) {}

  createAdapter() {
    return new PostgresAdapter()
  }

  createDriver(): Driver {
    return new PostgresStorageDriver(this.pool)
  }

  createQueryCompiler() {
    return new PostgresQueryCompiler()
  }

  // biome-ignore lint/suspicious/noExplicitAny: Kysely's Dialect interface types the introspector's database so
  createIntrospector(db: Kysely<any>) {
    return new PostgresIntrospector(db)
  }
}

/** A hot query compiled for PostgreSQL, with the name its prepared statement has on every connection of the pool. */
interface NamedHotQuery extends CompiledHotQuery {
  readonly name: string
}

class PostgresStorageDriver implements Driver {
  readonly #connections = new WeakMap<pg.PoolClient, PostgresStorageConnection>()
  /** Shared by the pool's connections: a name stands for one SQL text on each of them. */
  readonly #hot = new WeakMap<HotTemplate, NamedHotQuery>()
  readonly #compiler = new PostgresQueryCompiler()
  #hotQueries = 0

  constructor(private readonly pool: pg.Pool) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const client = await this.pool.connect()
    let connection = this.#connections.get(client)
    if (!connection) {
      connection = new PostgresStorageConnection(client, (template) => this.#hotQuery(template))
      this.#connections.set(client, connection)
    }
    return connection
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    let sql = 'begin'
    if (settings.isolationLevel || settings.accessMode) {
      sql = 'start transaction'
      if (settings.isolationLevel) sql += ` isolation level ${settings.isolationLevel}`
      if (settings.accessMode) sql += ` ${settings.accessMode}`
    }
    await connection.executeQuery(CompiledQuery.raw(sql))
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const { rows } = await connection.executeQuery<{ command: string }>(CompiledQuery.raw('commit'))
    // A transaction that failed answers COMMIT with ROLLBACK.
    if (rows[0]?.command === 'ROLLBACK') throw new AbortedTransactionError()
  }

  async rollbackTransaction(connection: PostgresStorageConnection): Promise<void> {
    try {
      await connection.executeQuery(CompiledQuery.raw('rollback'))
    } catch (error) {
      // The connection's state is unknown: the pool closes it instead of lending it again.
      connection.discard()
      throw error
    }
  }

  async releaseConnection(connection: PostgresStorageConnection): Promise<void> {
    connection.release()
  }

  async destroy(): Promise<void> {
    await this.pool.end()
  }

  #hotQuery(template: HotTemplate): NamedHotQuery {
    let hot = this.#hot.get(template)
    if (!hot) {
      hot = { ...compileHotQuery(template, this.#compiler), name: `hot-query-${++this.#hotQueries}` }
      this.#hot.set(template, hot)
    }
    return hot
  }
}

class PostgresStorageConnection implements DatabaseConnection {
  #discarded = false

  constructor(
    private readonly client: pg.PoolClient,
    private readonly hotQuery: (template: HotTemplate) => NamedHotQuery,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.#discarded) throw new Error('The PostgreSQL connection has been discarded')
    try {
      let config: pg.QueryConfig
      if (query instanceof HotQueryCall) {
        const hot = this.hotQuery(query.template)
        config = { name: hot.name, text: hot.sql, values: hot.values(query.params) }
      } else {
        config = { text: query.sql, values: query.parameters as unknown[] }
      }
      // pg's callback form, not its promise: through the promise (pg 8.23) each read promoted its request and rows to
      // V8's old generation as garbage, 17 to 21 major collections in 7 s of reads against 5 (docs/performance.md,
      // "2026-11-26").
      const result = await new Promise<pg.QueryResult>((resolve, reject) =>
        this.client.query(config, (error: Error | null, res: pg.QueryResult) => (error ? reject(error) : resolve(res))),
      )
      const { command, rowCount, rows } = result
      if (command === 'ROLLBACK' || command === 'COMMIT') return { rows: [{ command } as R] }
      const writes = command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE'
      return { numAffectedRows: writes ? BigInt(rowCount ?? 0) : undefined, rows: (rows ?? []) as R[] }
    } catch (error) {
      // pg's error carries the stack of its socket's reader: add the caller's, as Kysely's driver does.
      if (error instanceof Error && error.stack) error.stack += `\n${new Error().stack?.split('\n').slice(1).join('\n')}`
      throw error
    }
  }

  // biome-ignore lint/correctness/useYield: the service streams no query; Kysely's interface asks for the method
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('Streaming queries is not supported')
  }

  release(): void {
    this.client.release(this.#discarded)
  }

  discard(): void {
    this.#discarded = true
  }
}
