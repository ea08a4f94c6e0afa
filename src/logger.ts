// The one logger. Secrets never reach it: API keys, cookies and the api_key query parameter are redacted.
import { type Logger, pino } from 'pino'

/**
 * Logs go to stdout through an asynchronous, buffered writer: a synchronous write per request line would
 * cost a system call on every request. pino flushes the buffer when the process exits normally.
 */
export function createLogger(
  level: string,
  destination: pino.DestinationStream = pino.destination({ sync: false, minLength: 4096 }),
): Logger {
  return pino(
    {
      level,
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]', '*.apiKey', '*.secret'],
        censor: '[redacted]',
      },
    },
    destination,
  )
}

/** A URL with credential query parameters hidden, for logs: api_key, a sign-in link's token, an OpenID Connect code. */
export function redactUrl(url: string): string {
  return url.replace(/([?&](?:api_key|token|code)=)[^&#]*/gi, '$1[redacted]')
}
