// Queries on the request path, compiled once instead of built on every call. Kysely builds a query's operation tree
// and compiles it to SQL each time it runs; a hot query is built once, with a marker in place of each parameter, and
// compiled once per database by its driver, so that later calls only fill in the values.
//
// Where they pay, measured in-process on 2026-11-23 (docs/performance.md, "Hot queries"): µs per statement, median,
// hot against built by Kysely on every call. SQLite: a payload read 11 against 17, a transition's move 15 against 37,
// the month's quota count 9 against 50, the webhook subscribers' read (now within the deliveries' insert) 21 against
// 48. PostgreSQL, where a hot query is also a named prepared statement: a payload read 165 against 248, a transition's
// move 246 against 384, the quota count 179 against 384. Every hot query pays on both databases; measure a new one before it joins them, and keep to lookups by
// a unique key and inserts: a prepared statement's generic plan comes from the statistics of its first runs, and a
// query that could use another index may keep a bad plan (payloads/service.ts, getForProject). The outbox's claim
// (outbox.ts) is the one range read among them, with its states written as literals; its generic plan was checked on
// 1,000,000 rows (docs/performance.md, "seventh session"). A hot query names the columns it reads or returns
// (schema.ts, COLUMNS), never `*`: a prepared statement whose result a migration changed fails on every later call, and
// instances of the version before run theirs during a rolling deploy (docs/deployment.md).
//
// A statement whose text would change with its input, such as a group of rows written in one insert, takes its rows as
// one array a column (`unnest`), so that one text serves every size: a creation group's statement (creations.ts)
// written as a list of VALUES was parsed and planned by PostgreSQL for every group, about 250 µs of its time each.
// Such a statement reaches existing rows through their unique index whatever the plan: a lateral subquery with
// `limit 1` a row (a probe), or `insert ... on conflict` (its arbiter is the index). A join of the arrays to the table
// may keep a generic plan that reads every row of the project for each group: the Idempotency-Key responses written
// that way took 2 ms a group once a project had a few thousand keys (docs/performance.md, "fifth session").
//
// A hot query runs through Kysely (`db.executeQuery`): on the transaction's connection inside a transaction, on a
// connection of the pool outside one. On SQLite, outside a transaction and while no caller holds the one connection,
// it runs on it at once instead (DirectRunner, below). The drivers that openStorage gives Kysely (sqlite-dialect.ts,
// postgres-dialect.ts) recognise a HotQueryCall and compile its template with their dialect's compiler, once: on
// SQLite the statement is prepared once and kept; on PostgreSQL it is a named prepared statement, parsed once per
// pooled connection (Kysely sends an unnamed one, parsed and planned every time), inside a transaction as outside one,
// and planned once too unless PostgreSQL estimates a plan for the given values cheaper than its generic plan: an
// `unnest` of fewer than 10 elements is (the generic plan assumes 10), so a small group is planned for its values
// (20 to 30 µs of PostgreSQL's time a webhook event, docs/performance.md, "fourth session"). Kysely's executor and
// connection hand-over cost about 2.5 µs a statement on SQLite over running it on the connection directly, which is
// what hot queries did before they went through Kysely's driver interface.
import {
  type Compilable,
  type CompiledQuery,
  createQueryId,
  type Kysely,
  type QueryCompiler,
  type QueryId,
  type RawBuilder,
  type RootOperationNode,
} from 'kysely'
import type { Database } from './schema.js'

const MARKER_PREFIX = '\u0000hot-query-parameter:'

/** A hot query's operation tree, with a marker in place of each parameter: built once, the same for every dialect. */
export interface HotTemplate {
  readonly node: RootOperationNode
  readonly queryId: QueryId
}

/** What builds a hot query: Kysely's query builder, or a `sql` template for what the builder cannot write. */
type HotQueryBuilder<Params, Row> = (db: Kysely<Database>, params: Params) => Compilable<Row> | RawBuilder<Row>

/**
 * A query built by `build` from named parameters. `build` must read each parameter by name and pass it straight
 * through as a value (a comparison operand, an inserted or updated value), never inspect or spread it: it is
 * called once, with markers in place of the values. Unlike Kysely, which leaves an undefined column out, a
 * parameter left undefined is bound as NULL; keep parameters required. The template is built without the database's plugins;
 * a plugin (`withPlugin`) sees each call's query, as a test that fails a statement needs, and may not rewrite it.
 */
export class HotQuery<Params extends Record<string, unknown>, Row> {
  #template: HotTemplate | undefined

  constructor(private readonly build: HotQueryBuilder<Params, Row>) {}

  /** The rows the query returns (none for a statement without RETURNING). */
  async execute(db: Kysely<Database>, params: Params): Promise<Row[]> {
    this.#template ??= buildTemplate(db.withoutPlugins(), this.build)
    const rows = directRunners.get(db)?.(this.#template, params)
    if (rows !== undefined) return rows as Row[]
    const executor = db.getExecutor()
    if (executor.plugins.length > 0 && executor.transformQuery(this.#template.node, this.#template.queryId) !== this.#template.node) {
      throw new Error('A hot query runs as it was compiled: a plugin of its database may see it, not rewrite it')
    }
    return (await db.executeQuery<Row>(new HotQueryCall(this.#template, params))).rows
  }

  async executeTakeFirst(db: Kysely<Database>, params: Params): Promise<Row | undefined> {
    return (await this.execute(db, params))[0]
  }
}

/**
 * Runs a hot query at once, outside Kysely's executor, or says (undefined) that it must wait its turn through it.
 * SQLite's driver gives one for the database's root instance (sqlite-dialect.ts): its one connection, when free, runs
 * a statement synchronously, and Kysely's executor and hand-over of the connection cost a payload read 1.0 of its 5.2 µs
 * in-process (docs/performance.md, "eleventh session"). A transaction, or an instance with plugins (withPlugin makes a new one), is not registered.
 */
export type DirectRunner = (template: HotTemplate, params: Readonly<Record<string, unknown>>) => unknown[] | undefined

const directRunners = new WeakMap<Kysely<Database>, DirectRunner>()

/** Hot queries on `db` itself (not its transactions, nor instances made from it) go to `runner` first. */
export function runHotQueriesDirectly(db: Kysely<Database>, runner: DirectRunner): void {
  directRunners.set(db, runner)
}

/**
 * One execution of a hot query, as `db.executeQuery` carries it to the driver: the template and this call's values.
 * Its SQL depends on the dialect, which only the driver knows, so it has none of its own: `sql` is a sentence that
 * both databases refuse as a syntax error, should a driver that does not know hot queries ever be given one.
 */
export class HotQueryCall<Row = unknown> implements CompiledQuery<Row> {
  constructor(
    readonly template: HotTemplate,
    readonly params: Readonly<Record<string, unknown>>,
  ) {}

  get query(): RootOperationNode {
    return this.template.node
  }

  get queryId(): QueryId {
    return this.template.queryId
  }

  get sql(): string {
    return 'hot query: run only by the drivers of src/platform/db'
  }

  get parameters(): readonly unknown[] {
    return []
  }
}

/** A hot query compiled for one dialect: its SQL, and the values of a call in the order of its placeholders. */
export interface CompiledHotQuery {
  readonly sql: string
  values(params: Readonly<Record<string, unknown>>): unknown[]
}

/** Compiles a hot query's template with a dialect's compiler. Called by each driver once per template. */
export function compileHotQuery(template: HotTemplate, compiler: QueryCompiler): CompiledHotQuery {
  const { sql, parameters } = compiler.compileQuery(template.node, template.queryId)
  // For each placeholder: the name of the value to put there, or a constant the builder wrote.
  const slots = parameters.map((value): { name: string } | { constant: unknown } => {
    const name = markedName(value)
    return name === undefined ? { constant: value } : { name }
  })
  return {
    sql,
    values: (params) => slots.map((slot) => ('name' in slot ? params[slot.name] : slot.constant)),
  }
}

/**
 * A group of rows as one array a column, each named `prefix` + the column (`rows_uuid` holds the rows' uuids in order,
 * and so on): how a hot query takes a group, with `unnest` (see above). The columns are those of the first row; every
 * row has the same. An empty group has no columns: its callers write nothing.
 */
export function asColumns<Row extends object, Prefix extends string>(
  rows: readonly Row[],
  prefix: Prefix,
): { [K in keyof Row & string as `${Prefix}${K}`]: Row[K][] } {
  const columns = rows.length === 0 ? [] : (Object.keys(rows[0]!) as (keyof Row & string)[])
  return Object.fromEntries(columns.map((column) => [`${prefix}${column}`, rows.map((row) => row[column])])) as {
    [K in keyof Row & string as `${Prefix}${K}`]: Row[K][]
  }
}

function buildTemplate<Params extends Record<string, unknown>, Row>(
  db: Kysely<Database>,
  build: HotQueryBuilder<Params, Row>,
): HotTemplate {
  const read = new Set<string>()
  const markers = new Proxy({} as Params, {
    get: (_target, name) => {
      if (typeof name !== 'string') return undefined
      read.add(name)
      return `${MARKER_PREFIX}${name}`
    },
  })
  // Compiled here only to check the markers: the operation tree is what each driver compiles for its dialect.
  const built = build(db, markers)
  const { query, parameters, sql } = 'isRawBuilder' in built ? built.compile(db) : built.compile()
  const placed = new Set(parameters.map(markedName))
  const lost = [...read].filter((name) => !placed.has(name))
  if (lost.length > 0) throw new Error(`Hot query parameters ${lost.join(', ')} are not passed through as values`)
  if (COLUMNS_AS_A_STAR.test(sql.replace(COUNT_OF_ROWS, 'count(1)'))) {
    throw new Error(`A hot query names the columns it reads or returns (schema.ts, COLUMNS), never *: ${sql.slice(0, 120)}`)
  }
  return { node: query, queryId: createQueryId() }
}

/**
 * A `*` that stands for columns: after `select`, `distinct`, `returning`, a comma or a dot (`select *`, `select "uuid", *`,
 * `returning t.*`, `(p).*`). Over a table, its columns would change with a migration, and PostgreSQL refuses to run a
 * prepared statement whose result type changed (schema.ts, COLUMNS); a hot query names every column it reads, even
 * from its own arrays, so that no exception needs judging. `count(*)` counts rows and is taken out first.
 */
const COLUMNS_AS_A_STAR = /(?:\bselect|\bdistinct|\breturning|,|\.)\s*\*/i
const COUNT_OF_ROWS = /\bcount\s*\(\s*\*\s*\)/gi

function markedName(value: unknown): string | undefined {
  return typeof value === 'string' && value.startsWith(MARKER_PREFIX) ? value.slice(MARKER_PREFIX.length) : undefined
}
