// Queries on the request path, compiled once instead of built on every call. Kysely builds a query's operation tree
// and compiles it to SQL each time it runs; a hot query is built and compiled once per dialect with a marker in
// place of each parameter, and later calls fill in the values and run the compiled query with db.executeQuery, so
// that Kysely still provides the connection (the transaction's, or the pool's) and runs its plugins.
//
// They pay on every path that uses them. CPU time per request of the real service (app.inject, SQLite, the
// development machine under load, medians of three alternating runs, 2026-11-23), with the same queries built on every
// call, then as hot queries: POST /api/v1/payloads 829 -> 715 µs (-14%), GET /api/v1/payloads/{uuid} 169 -> 139 µs
// (-18%), POST /api/v1/sign/{uuid}/reject 603 -> 389 µs (-35%). The load generator's requests per second were not
// usable that day (a load average near 20 on 2 cores). Running the statements on the SQLite connection directly,
// past Kysely, saved about another 60 µs on the POST and 25 µs on the GET, but it needed Kysely's internal executor
// to find the connection: dropped.
import { type Compilable, CompiledQuery, sql } from 'kysely'
import type { DbOrTx } from './database.js'

const MARKER_PREFIX = '\u0000hot-query-parameter:'

interface Compiled {
  sql: string
  /** For each positional parameter: the name of the value to put there, or a constant the builder wrote. */
  slots: Array<{ name: string } | { constant: unknown }>
}

type SqlDialect = 'sqlite' | 'postgres'

/** How each dialect's compiler writes the first parameter: `?` for SQLite, `$1` for PostgreSQL. */
const DIALECT_BY_PLACEHOLDER: Record<string, SqlDialect> = { '?': 'sqlite', $1: 'postgres' }

/** A database and its transactions, by the dialect their compiler writes; each is asked once. */
const dialects = new WeakMap<DbOrTx, SqlDialect>()

function dialectOf(db: DbOrTx): SqlDialect {
  let dialect = dialects.get(db)
  if (!dialect) {
    const placeholder = sql`${0}`.compile(db).sql
    dialect = DIALECT_BY_PLACEHOLDER[placeholder]
    if (!dialect) throw new Error(`Hot queries do not know the dialect that writes parameters as ${placeholder}`)
    dialects.set(db, dialect)
  }
  return dialect
}

/**
 * A query built by `build` from named parameters. `build` must read each parameter by name and pass it straight
 * through as a value (a comparison operand, an inserted or updated value), never inspect or spread it: it is
 * called once per dialect, with markers in place of the values. Unlike Kysely, which leaves an undefined column
 * out, a parameter left undefined is bound as NULL; keep parameters required.
 */
export class HotQuery<Params extends Record<string, unknown>, Row> {
  private readonly compiled = new Map<SqlDialect, Compiled>()

  constructor(private readonly build: (db: DbOrTx, params: Params) => Compilable<Row>) {}

  /** The rows the query returns (none for a statement without RETURNING). */
  async execute(db: DbOrTx, params: Params): Promise<Row[]> {
    const { sql: text, slots } = this.compiledFor(db)
    const values = slots.map((slot) => ('name' in slot ? params[slot.name] : slot.constant))
    return (await db.executeQuery<Row>(CompiledQuery.raw(text, values))).rows
  }

  async executeTakeFirst(db: DbOrTx, params: Params): Promise<Row | undefined> {
    return (await this.execute(db, params))[0]
  }

  private compiledFor(db: DbOrTx): Compiled {
    const dialect = dialectOf(db)
    let compiled = this.compiled.get(dialect)
    if (!compiled) {
      compiled = compileWithMarkers(db, this.build)
      this.compiled.set(dialect, compiled)
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
