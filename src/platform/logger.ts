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

/** Hidden wherever a line's fields or a child logger's bindings carry them (hideSecrets). */
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

/** Objects, arrays and errors are looked into this many levels down; deeper ones are logged as they are. */
const MAX_DEPTH = 8

/** What pino writes for a reference back to an object the line is inside of. */
const CIRCULAR = '[Circular]'
/** The result of an object still being looked into: a reference back to it is a cycle. */
const LOOKING = Symbol('looking')

/**
 * The fields with every SECRET_PROPERTIES property hidden: at the top of the line, and in the plain objects, arrays
 * and errors among them (their own properties, a `cause` and an AggregateError's `errors` included, their message and
 * stack left unread), down to MAX_DEPTH levels: `{ apiKey }`, `{ projects: [{ apiKey }] }`,
 * `{ err: { cause: { secret } } }`. Another kind of object (a request, an instance of a class) has its own such
 * properties hidden, and is not looked into further. A line that holds no secret is left to pino as it is, a cycle
 * included. Otherwise what holds a secret is copied, with its prototype, its other properties and its getters (so an
 * error is still serialised as one, and a getter that throws is met by pino's serialiser, as before), and a reference
 * back to an object the line is inside of is written `[Circular]`; the caller's objects are not changed. An object
 * met again is looked into again only when met higher up, where more of it is within reach.
 */
function hideSecrets<T extends Record<string, unknown>>(fields: T): T {
  if (!holdsSecret(fields, 0, new Map())) return fields
  return hideIn(fields, 0, new Map()) as T
}

/** The properties of a non-array object that are looked at: a plain object's, an error's (not its message or stack), another object's secret ones. */
function propertiesToLookAt(value: Record<string, unknown>): readonly string[] {
  const prototype: unknown = Object.getPrototypeOf(value)
  if (prototype === Object.prototype || prototype === null) return Object.keys(value)
  if (value instanceof Error) return Object.getOwnPropertyNames(value).filter((name) => name !== 'stack' && name !== 'message')
  return SECRET_PROPERTIES.filter((name) => Object.hasOwn(value, name))
}

/** Reads a property; undefined when its getter throws (it is then left for pino's serialiser, as before). */
function readProperty(value: Record<string, unknown>, key: string): { field: unknown } | undefined {
  try {
    return { field: Reflect.get(value, key) }
  } catch {
    return undefined
  }
}

/** A property the logger hides: a secret's name, with a value (an absent one is written as it is). */
function isSecret(key: string, field: unknown): boolean {
  return SECRET_PROPERTIES.includes(key) && field !== undefined && field !== null
}

/** Whether a secret is within reach; `checked` holds the highest level each object was looked at from. */
function holdsSecret(value: unknown, depth: number, checked: Map<object, number>): boolean {
  if (!isObject(value) || depth > MAX_DEPTH) return false
  const checkedAt = checked.get(value)
  if (checkedAt !== undefined && checkedAt <= depth) return false
  checked.set(value, depth)
  try {
    if (Array.isArray(value)) return value.some((item) => holdsSecret(item, depth + 1, checked))
    for (const key of propertiesToLookAt(value)) {
      const read = readProperty(value, key)
      if (read === undefined) continue
      if (isSecret(key, read.field) || holdsSecret(read.field, depth + 1, checked)) return true
    }
  } catch {
    // An object that cannot be read (a revoked proxy) is left for pino's serialiser, which cannot read it either.
  }
  return false
}

interface Looked {
  depth: number
  result: unknown
}

function hideIn(value: unknown, depth: number, seen: Map<object, Looked>): unknown {
  if (!isObject(value) || depth > MAX_DEPTH) return value
  const known = seen.get(value)
  if (known !== undefined && known.depth <= depth) return known.result === LOOKING ? CIRCULAR : known.result
  const looked: Looked = { depth, result: LOOKING }
  seen.set(value, looked)
  let hidden: unknown = value
  try {
    hidden = Array.isArray(value) ? hideInArray(value, depth, seen) : hideInObject(value, propertiesToLookAt(value), depth, seen)
  } catch {
    // An object that cannot be read (a revoked proxy) is left for pino's serialiser, which cannot read it either.
  }
  looked.result = hidden
  return hidden
}

function hideInArray(value: unknown[], depth: number, seen: Map<object, Looked>): unknown[] {
  let copy: unknown[] | undefined
  for (let i = 0; i < value.length; i++) {
    const hidden = hideIn(value[i], depth + 1, seen)
    if (hidden === value[i]) continue
    copy ??= value.slice()
    copy[i] = hidden
  }
  return copy ?? value
}

/** `value` with the secrets among its properties `keys` hidden, and the others looked into; or itself when none. */
function hideInObject(value: Record<string, unknown>, keys: readonly string[], depth: number, seen: Map<object, Looked>): unknown {
  let changes: Map<string, unknown> | undefined
  for (const key of keys) {
    const read = readProperty(value, key)
    if (read === undefined) continue
    const { field } = read
    const hidden = isSecret(key, field) ? CENSOR : hideIn(field, depth + 1, seen)
    if (hidden === field) continue
    changes ??= new Map()
    changes.set(key, hidden)
  }
  if (!changes) return value
  const descriptors: PropertyDescriptorMap = Object.getOwnPropertyDescriptors(value)
  for (const [name, descriptor] of Object.entries(descriptors)) {
    const { enumerable } = descriptor
    if (changes.has(name)) descriptors[name] = { value: changes.get(name), enumerable, writable: true, configurable: true }
    // An accessor is read on its own object (an error's stack is one): the copy holds what it gave, or the accessor
    // itself when reading it throws (it is then as unreadable in the copy as in the original).
    else if ('get' in descriptor) {
      try {
        descriptors[name] = { value: Reflect.get(value, name), enumerable, writable: true, configurable: true }
      } catch {}
    }
  }
  return Object.create(Object.getPrototypeOf(value), descriptors) as unknown
}

/** Query parameters that carry credentials: an API key, a sign-in link's token, an OpenID Connect code. */
const CREDENTIAL_PARAMETERS = new Set(['api_key', 'token', 'code'])
/** Text shaped like an API key: hidden wherever a URL carries it, and never taken as a request id. */
const API_KEY_LIKE = /cs_[A-Za-z0-9_-]{8,}/

/** Whether `text`, or what its percent-escapes stand for, holds something shaped like an API key. */
export function holdsApiKeyLike(text: string): boolean {
  if (API_KEY_LIKE.test(text)) return true
  if (!text.includes('%')) return false
  try {
    return API_KEY_LIKE.test(decodeURIComponent(text))
  } catch {
    return false
  }
}

/**
 * A request URL for logs: the path, its segments shaped like an API key hidden, and the query rebuilt from its decoded
 * names and values with credentials hidden: the values of the credential parameters (names compared decoded and
 * case-insensitively, so `?api%5Fkey=` is hidden as `api_key` is), and any name or value shaped like an API key (a key
 * pasted into the path, or sent as a parameter's name, had been logged whole).
 */
export function redactUrl(url: string): string {
  const queryStart = url.indexOf('?')
  const rawPath = queryStart === -1 ? url : url.slice(0, queryStart)
  const path = holdsApiKeyLike(rawPath)
    ? rawPath
        .split('/')
        .map((segment) => (holdsApiKeyLike(segment) ? '[redacted]' : segment))
        .join('/')
    : rawPath
  if (queryStart === -1) return path
  const parameters = [...new URLSearchParams(url.slice(queryStart + 1))].map(([name, value]) => {
    const hidden = CREDENTIAL_PARAMETERS.has(name.toLowerCase().replace(/\[\]$/, '')) || API_KEY_LIKE.test(value)
    const shownName = API_KEY_LIKE.test(name) ? '[redacted]' : encodeURIComponent(name)
    return `${shownName}=${hidden ? '[redacted]' : encodeURIComponent(value)}`
  })
  return parameters.length === 0 ? path : `${path}?${parameters.join('&')}`
}
