// Characters that hide or reorder what a reader sees: shared by the server (names are refused with them) and the
// signing page (text from an application is shown isolated, with a warning when it holds them).

/**
 * Every control character (C0, DEL and the C1 range U+0080 to U+009F) except tab and line breaks; every format
 * character (Unicode category Cf: zero-width characters, direction marks, embeddings, overrides and isolates, the soft
 * hyphen, the byte-order mark, tag characters); every other default-ignorable code point, which a font draws as
 * nothing (the combining grapheme joiner U+034F, variation selectors, Khmer and Mongolian fillers, Hangul fillers),
 * but the two presentation selectors U+FE0E and U+FE0F that every emoji carries; the braille blank U+2800; and the
 * line and paragraph separators.
 */
const DECEPTIVE_CHARACTER = /(?![\uFE0E\uFE0F])[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\u2028\u2029\u2800](?<![\t\n\r])/u

/** True when text holds characters that hide or reorder what is shown (zero-width, direction overrides, controls). */
export function hasDeceptiveCharacters(text: string): boolean {
  return DECEPTIVE_CHARACTER.test(text)
}

/** The first such character as a code point in U+ notation (e.g. U+202E), for a message that names it; undefined when there is none. */
export function firstDeceptiveCharacter(text: string): string | undefined {
  const found = DECEPTIVE_CHARACTER.exec(text)?.[0]
  return found === undefined ? undefined : `U+${(found.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`
}
