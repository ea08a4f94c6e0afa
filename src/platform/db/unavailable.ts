// Reads the code a database or socket error carries, and recognises the errors that mean "a dependency is away or
// overloaded for now" (database restarting, connection refused, no connection slot left, a statement that ran out of
// time), so that the service answers 503 with Retry-After and recovers by itself instead of answering 500.
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'SQLITE_BUSY',
  'SQLITE_FULL', // the disk (or max_page_count) is full: as PostgreSQL's disk_full below
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '25P03', // idle_in_transaction_session_timeout: the session was ended (database.ts)
  '57014', // query_canceled: a statement_timeout set on the database or role ran out (the table locked, the server busy)
  '53000', // insufficient_resources, and the class's codes below
  '53100', // disk_full
  '53200', // out_of_memory
  '53300', // too_many_connections: max_connections, or the role's or database's CONNECTION LIMIT, reached
  '53400', // configuration_limit_exceeded
  '08000',
  '08003',
  '08006',
])

/** The code an error carries: PostgreSQL's SQLSTATE, SQLite's name, a socket's error name; undefined when none. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' ? code : undefined
}

export function isUnavailableError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const code = errorCode(error)
  if (code !== undefined && UNAVAILABLE_CODES.has(code)) return true
  const message = (error as { message?: unknown }).message
  return (
    typeof message === 'string' &&
    /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(
      message,
    )
  )
}
