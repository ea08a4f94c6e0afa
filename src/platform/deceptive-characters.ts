// Characters that hide or reorder what a reader sees: shared by the server (names are refused with them) and the
// signing page (text from an application is shown isolated, with a warning when it holds them).

/**
 * C0 controls and DEL except tab and line breaks; every format character (Unicode category Cf: zero-width
 * characters, direction marks, embeddings, overrides and isolates, the soft hyphen, the byte-order mark, tag
 * characters); the line and paragraph separators; and the fillers that render as nothing (Hangul fillers, U+180E).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are part of what this finds
const DECEPTIVE_CHARACTER = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\p{Cf}\u2028\u2029\u115f\u1160\u180e\u3164\uffa0]/u

/** True when text holds characters that hide or reorder what is shown (zero-width, direction overrides, controls). */
export function hasDeceptiveCharacters(text: string): boolean {
  return DECEPTIVE_CHARACTER.test(text)
}

/** The first such character as a code point in U+ notation (e.g. U+202E), for a message that names it; undefined when there is none. */
export function firstDeceptiveCharacter(text: string): string | undefined {
  const found = DECEPTIVE_CHARACTER.exec(text)?.[0]
  return found === undefined ? undefined : `U+${(found.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`
}
