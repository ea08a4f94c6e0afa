// Values no field of the interface has a use for and the databases cannot keep, refused in every request (body,
// query, path) before any route sees them, with a 422 naming the field:
// - U+0000 in a string (or a key): PostgreSQL cannot store it in text, and XRPL signing prefixes end in it;
// - a number JSON.parse could only read as Infinity (1e309): stored, it would silently become null;
// - a lone UTF-16 surrogate in a string or a key (an unpaired "\ud800" escape): UTF-8 cannot hold it, and both
//   databases would keep U+FFFD in its place, while the answer echoed it as sent.
import type { FastifyRequest } from 'fastify'
import { type FieldError, unprocessable } from '../errors.js'

const NUL = '\u0000'

/**
 * preValidation hook of the whole app. A route that takes its validation errors in its handler (attachValidation:
 * the GET of a payload, which counts the request's rate there first) gets this refusal there too, as its validation
 * error; an error of its schema found next takes its place (a 422 either way).
 */
export async function refuseUnstorableValues(request: FastifyRequest): Promise<void> {
  const found = unstorableIn(request.params, '') ?? unstorableIn(request.query, '') ?? unstorableIn(request.body, '')
  if (found === undefined) return
  const refused = unprocessable([{ ...found, field: found.field || 'body' }])
  if (!request.routeOptions.attachValidation) throw refused
  // Not an Ajv error: the handler throws it as it is, and the error handler answers an AppError as such.
  request.validationError = refused as unknown as FastifyRequest['validationError']
}

function unstorableText(text: string, path: string): FieldError | undefined {
  if (text.includes(NUL)) return { field: path, message: 'must not contain the NUL character (U+0000)' }
  if (!text.isWellFormed()) return { field: path, message: 'must not contain a lone UTF-16 surrogate (an unpaired \\uD800 to \\uDFFF)' }
  return undefined
}

/** The first unstorable value in `value`, with its dotted path ('' for `value` itself). */
function unstorableIn(value: unknown, path: string): FieldError | undefined {
  if (typeof value === 'string') return unstorableText(value, path)
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : { field: path, message: 'must be a finite number' }
  if (typeof value !== 'object' || value === null) return undefined
  for (const [key, item] of Object.entries(value)) {
    const itemPath = path ? `${path}.${key}` : key
    const unstorableKey = unstorableText(key, itemPath)
    if (unstorableKey !== undefined) return { ...unstorableKey, field: JSON.stringify(itemPath).slice(1, -1) }
    const found = unstorableIn(item, itemPath)
    if (found !== undefined) return found
  }
  return undefined
}
