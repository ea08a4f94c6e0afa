// Reads the code a database or socket error carries, and recognises the errors that mean "a dependency is away or at
// one of its limits for now" (database restarting, connection refused, no connection slot left, a statement that ran
// out of time, a full disk), so that the service answers 503 with Retry-After and recovers by itself instead of
// answering 500. A dependency away is logged as a warning: it comes back by itself. A database at one of its limits is
// logged as an error: it may stay there until an operator acts (more disk, more connection slots, a timeout that fits).
const AWAY_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'SQLITE_BUSY',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '25P03', // idle_in_transaction_session_timeout: the session was ended (database.ts)
  '08000',
  '08003',
  '08006',
])

const LIMIT_CODES = new Set([
  'SQLITE_FULL', // the disk (or max_page_count) is full: as PostgreSQL's disk_full below
  '57014', // query_canceled: a statement_timeout set on the database or role ran out (the table locked, the server busy)
  '55P03', // lock_not_available: a lock_timeout set on the database or role ran out (a migration holding a table)
  '53000', // insufficient_resources, and the class's codes below
  '53100', // disk_full
  '53200', // out_of_memory
  '53300', // too_many_connections: max_connections, or the role's or database's CONNECTION LIMIT, reached
  '53400', // configuration_limit_exceeded (temp_file_limit, max_locks_per_transaction)
  '3D000', // invalid_catalog_name: the database is gone (dropped, or not yet restored)
  '42P01', // undefined_table: the database is there without its schema (recreated empty, restored without it)
])

/** The code an error carries: PostgreSQL's SQLSTATE, SQLite's name, a socket's error name; undefined when none. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' ? code : undefined
}

/** A row that a unique index or primary key refused, on either database. */
export function isUniqueViolation(error: unknown): boolean {
  const code = errorCode(error)
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE'
}

/** A database at one of its limits (LIMIT_CODES): unavailable, and for an operator to look at. */
export function isLimitError(error: unknown): boolean {
  const code = errorCode(error)
  return code !== undefined && LIMIT_CODES.has(code)
}

export function isUnavailableError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const code = errorCode(error)
  if (code !== undefined && (AWAY_CODES.has(code) || LIMIT_CODES.has(code))) return true
  const message = (error as { message?: unknown }).message
  return (
    typeof message === 'string' &&
    /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(
      message,
    )
  )
}

/**
 * What opening the database can fail on that is the settings' or the server's to fix, not the service's: a path SQLite
 * cannot open or that holds no database, a URL the driver cannot read, and PostgreSQL's refusal of a role or password
 * it does not know (class 28).
 */
const OPEN_CODES = new Set([
  'ENOENT',
  'ENOTDIR',
  'EISDIR',
  'EACCES',
  'EPERM',
  'EROFS',
  'SQLITE_CANTOPEN',
  'SQLITE_NOTADB',
  'SQLITE_READONLY',
  'SQLITE_PERM',
  '28000', // invalid_authorization_specification: no such role, no pg_hba.conf entry
  '28P01', // invalid_password
  'ERR_INVALID_URL', // a PostgreSQL URL the driver cannot parse (a port above 65535, a "#" in the password not percent-encoded)
])

/**
 * The database could not be opened or reached: away, at one of its limits (a database that does not exist among them),
 * or refused for the settings that name it (OPEN_CODES).
 */
export function isOpenError(error: unknown): boolean {
  const code = errorCode(error)
  return (code !== undefined && OPEN_CODES.has(code)) || isUnavailableError(error)
}
