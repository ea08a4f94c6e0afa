// U+0000 is refused in every string a request carries (body, query, path), before any route sees it: PostgreSQL
// cannot store it in text, XRPL signing prefixes end in it, and no field of the interface has a use for it.
import type { FastifyRequest } from 'fastify'
import { unprocessable } from '../errors.js'

const NUL = '\u0000'

/** preValidation hook of the whole app: a 422 naming the first field that holds a NUL character. */
export async function refuseNulCharacters(request: FastifyRequest): Promise<void> {
  const field = fieldWithNul(request.params, '') ?? fieldWithNul(request.query, '') ?? fieldWithNul(request.body, '')
  if (field !== undefined) throw unprocessable([{ field: field || 'body', message: 'must not contain the NUL character (U+0000)' }])
}

/** The dotted path of the first string (value or key) in `value` that contains NUL; '' for `value` itself. */
function fieldWithNul(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes(NUL) ? path : undefined
  if (typeof value !== 'object' || value === null) return undefined
  for (const [key, item] of Object.entries(value)) {
    const itemPath = path ? `${path}.${key}` : key
    if (key.includes(NUL)) return itemPath.replaceAll(NUL, '\\u0000')
    const found = fieldWithNul(item, itemPath)
    if (found !== undefined) return found
  }
  return undefined
}
