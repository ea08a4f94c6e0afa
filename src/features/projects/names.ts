// Names people give to projects and API keys: trimmed, 1 to 100 characters, no control, invisible or
// direction-changing characters (a name ending in U+202E reversed the signing page's own sentences after it).
import { firstDeceptiveCharacter } from '../../platform/deceptive-characters.js'
import type { FieldError } from '../../platform/errors.js'

export const MAX_NAME_CHARS = 100
export const DEFAULT_API_KEY_NAME = 'API key'

/** C0, DEL and the C1 controls (U+0080 to U+009F, NEXT LINE U+0085 among them). */
const CONTROL_CHARACTER = /\p{Cc}/u

/** The trimmed name, or the error for `field`. Characters are counted as code points, as JSON Schema counts them. */
export function normalizeName(field: string, value: string): { name: string } | { error: FieldError } {
  const name = value.trim()
  const length = [...name].length
  if (length === 0) return { error: { field, message: 'must not be empty' } }
  if (length > MAX_NAME_CHARS) return { error: { field, message: `must be at most ${MAX_NAME_CHARS} characters` } }
  if (CONTROL_CHARACTER.test(name)) return { error: { field, message: 'must not contain control characters' } }
  const deceptive = firstDeceptiveCharacter(name)
  if (deceptive !== undefined) {
    return { error: { field, message: `must not contain invisible or direction-changing characters (found ${deceptive})` } }
  }
  return { name }
}
