// Characters that hide or reorder what a reader sees: shared by the server (names are refused with them) and the
// signing page (text from an application is shown isolated, with a warning when it holds them).

/**
 * Every control character (C0, DEL and the C1 range U+0080 to U+009F) except tab and line breaks; every format
 * character (Unicode category Cf: zero-width characters, direction marks, embeddings, overrides and isolates, the soft
 * hyphen, the byte-order mark, tag characters); every other default-ignorable code point, which a font draws as
 * nothing (the combining grapheme joiner U+034F, Khmer and Hangul fillers), but the variation selectors, which only
 * choose the form of the character before them (U+FE00 to U+FE0F, emoji's among them, the ideographic ones of
 * Japanese names, U+E0100 to U+E01EF, and Mongolian's U+180B to U+180D and U+180F); the braille blank U+2800; and the
 * line and paragraph separators. A lookahead, not a lookbehind: Safari before 16.4 cannot parse the latter, and the
 * signing page's script would not start.
 */
const DECEPTIVE_CHARACTER =
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: the variation selectors are listed on purpose, each a code point of its own under the u flag
  /(?![\t\n\r\uFE00-\uFE0F\u180B-\u180D\u180F\u{E0100}-\u{E01EF}])[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\u2028\u2029\u2800]/u

/** True when text holds characters that hide or reorder what is shown (zero-width, direction overrides, controls). */
export function hasDeceptiveCharacters(text: string): boolean {
  return DECEPTIVE_CHARACTER.test(text)
}

/** The first such character as a code point in U+ notation (e.g. U+202E), for a message that names it; undefined when there is none. */
export function firstDeceptiveCharacter(text: string): string | undefined {
  const found = DECEPTIVE_CHARACTER.exec(text)?.[0]
  return found === undefined ? undefined : `U+${(found.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`
}
