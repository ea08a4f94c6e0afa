// The one logger. Secrets never reach it: API keys, cookies and the api_key query parameter are redacted.
import { type Logger, pino } from 'pino'

/** A quiet service's buffered lines (a lone warning) reach stdout within this long. */
const FLUSH_INTERVAL_MS = 1000

/**
 * Logs go to stdout through an asynchronous, buffered writer: a synchronous write per request line would
 * cost a system call on every request. The buffer is flushed every second and when the process exits.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  if (destination) return pino(options(level), destination)
  const stdout = pino.destination({ sync: false, minLength: 4096 })
  setInterval(() => stdout.flush(), FLUSH_INTERVAL_MS).unref()
  return pino(options(level), stdout)
}

function options(level: string): pino.LoggerOptions {
  return {
    level,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]', '*.apiKey', '*.secret'],
      censor: '[redacted]',
    },
  }
}

/** A URL with credential query parameters hidden, for logs: api_key, a sign-in link's token, an OpenID Connect code. */
export function redactUrl(url: string): string {
  return url.replace(/([?&](?:api_key|token|code)=)[^&#]*/gi, '$1[redacted]')
}
