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

/** Query parameters that carry credentials: an API key, a sign-in link's token, an OpenID Connect code. */
const CREDENTIAL_PARAMETERS = new Set(['api_key', 'token', 'code'])
/** A value shaped like an API key is hidden under any parameter name. */
const API_KEY_LIKE = /cs_[A-Za-z0-9_-]{8,}/

/**
 * A request URL for logs: the path, and the query rebuilt from its decoded names and values with credentials hidden.
 * Names are compared decoded and case-insensitively, so `?api%5Fkey=` is hidden as `api_key` is.
 */
export function redactUrl(url: string): string {
  const queryStart = url.indexOf('?')
  if (queryStart === -1) return url
  const parameters = [...new URLSearchParams(url.slice(queryStart + 1))].map(([name, value]) => {
    const hidden = CREDENTIAL_PARAMETERS.has(name.toLowerCase().replace(/\[\]$/, '')) || API_KEY_LIKE.test(value)
    return `${encodeURIComponent(name)}=${hidden ? '[redacted]' : encodeURIComponent(value)}`
  })
  return parameters.length === 0 ? url.slice(0, queryStart) : `${url.slice(0, queryStart)}?${parameters.join('&')}`
}
