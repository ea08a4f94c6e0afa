// The one logger. Secrets never reach it: API keys, cookies and the api_key query parameter are redacted.
import { type Logger, pino } from 'pino'

/** A quiet service's buffered lines (a lone warning) reach stdout within this long. */
const FLUSH_INTERVAL_MS = 1000

/**
 * Logs go to stdout through an asynchronous, buffered writer: a synchronous write per request line would
 * cost a system call on every request. The buffer is flushed every second and when the process exits.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return hidingBoundSecrets(pino(options(level), destination ?? bufferedStdout()))
}

function bufferedStdout(): pino.DestinationStream {
  const stdout = pino.destination({ sync: false, minLength: 4096 })
  setInterval(() => stdout.flush(), FLUSH_INTERVAL_MS).unref()
  return stdout
}

const CENSOR = '[redacted]'

/** Hidden in any object at the top of a line or of a child logger's bindings: `{ project: { apiKey } }`. */
const SECRET_PROPERTIES = ['apiKey', 'secret']

function options(level: string): pino.LoggerOptions {
  return {
    level,
    // Paths under req and res only: pino passes every value of every line through a redaction path that starts with a
    // wildcard, 2 to 3 µs a line, in every request (docs/performance.md, "2026-11-26, evening"). hideSecrets does the
    // wildcard's part, looking at objects only.
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'], censor: CENSOR },
    formatters: { log: hideSecrets },
    // Objects interpolated into the message (`%o`, `%j`) have theirs hidden as the line's fields do.
    hooks: {
      logMethod(args, method) {
        const firstValue = typeof args[0] === 'string' ? 1 : 2
        for (let i = firstValue; i < args.length; i++) {
          const value: unknown = args[i]
          if (isObject(value)) args[i] = hideSecrets(value)
        }
        return method.apply(this, args)
      },
    },
  }
}

/**
 * The logger, whose children (and theirs, which inherit the method) hide secrets in their bindings too: pino's
 * formatters see a line's fields, and the root logger's bindings only.
 */
function hidingBoundSecrets(logger: Logger): Logger {
  const { child, setBindings } = logger
  logger.child = function (this: Logger, bindings, childOptions) {
    return child.call(this, hideSecrets(bindings), childOptions)
  } as typeof child
  logger.setBindings = function (this: Logger, bindings) {
    setBindings.call(this, hideSecrets(bindings))
  }
  return logger
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object'
}

/**
 * The fields with SECRET_PROPERTIES of each object among them hidden. An object that has one is copied (its prototype
 * and other properties kept, so an error is still serialised as one); the caller's objects are not changed.
 */
function hideSecrets<T extends Record<string, unknown>>(fields: T): T {
  let copy: Record<string, unknown> | undefined
  for (const key in fields) {
    const value = fields[key]
    if (!isObject(value) || !SECRET_PROPERTIES.some((name) => Object.hasOwn(value, name))) continue
    const descriptors: PropertyDescriptorMap = Object.getOwnPropertyDescriptors(value)
    for (const [name, descriptor] of Object.entries(descriptors)) {
      const { enumerable } = descriptor
      if (SECRET_PROPERTIES.includes(name)) descriptors[name] = { value: CENSOR, enumerable, writable: true, configurable: true }
      // An accessor is read on its own object (an error's stack is one): the copy holds what it gave, or the accessor
      // itself when reading it throws (it is then as unreadable in the copy as in the original).
      else if ('get' in descriptor) {
        try {
          descriptors[name] = { value: Reflect.get(value, name), enumerable, writable: true, configurable: true }
        } catch {}
      }
    }
    copy ??= { ...fields }
    copy[key] = Object.create(Object.getPrototypeOf(value), descriptors)
  }
  return (copy ?? fields) as T
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
