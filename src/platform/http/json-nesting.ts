// How deep a request body may nest objects and arrays. Every walk over a body (the NUL and number checks, the schema
// validator, the Idempotency-Key fingerprint, serialisation) recurses once per level: thousands of levels, which a
// 64 KiB body easily holds ('[' repeated), overflow the stack and would end the request in a 500. No field of the
// interface needs more than a few levels (a transaction's Memos are 4 deep in the body; metadata is the app's own).
export const MAX_JSON_NESTING = 32

/**
 * Whether `text` (JSON, not yet parsed) opens more than `max` objects or arrays inside one another. One pass over the
 * characters, without recursion, skipping the contents of strings (a '[' in a string opens nothing).
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i)
    if (inString) {
      if (char === 0x5c /* \ */) i++
      else if (char === 0x22 /* " */) inString = false
    } else if (char === 0x22) {
      inString = true
    } else if (char === 0x7b /* { */ || char === 0x5b /* [ */) {
      if (++depth > max) return true
    } else if (char === 0x7d /* } */ || char === 0x5d /* ] */) {
      depth--
    }
  }
  return false
}
