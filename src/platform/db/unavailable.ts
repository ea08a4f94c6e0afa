// Reads the code a database or socket error carries, and recognises the errors that mean "a dependency is away for
// now" (database restarting, connection refused), so that the service answers 503 and recovers by itself instead of
// answering 500.
const UNAVAILABLE_CODES = new Set([
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
