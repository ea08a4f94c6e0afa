// A visible warning under text from the application that hides or reorders characters (invisible or
// direction-changing ones), so that what a person reads is what they approve.
import { type Child, h } from '../shared/dom.js'
import { hasDeceptiveCharacters } from './format.js'

const DECEPTION_WARNINGS = {
  message: 'This message contains invisible or direction-changing characters: what you see may not be all that you sign.',
  note: 'This note contains invisible or direction-changing characters: it may not read as it is written.',
  field: 'This text contains invisible or direction-changing characters: it may not read as it is written.',
}

/** A visible warning when the application's text hides or reorders characters; nothing otherwise. */
export function deceptionWarning(text: string, kind: keyof typeof DECEPTION_WARNINGS, testId: string): Child {
  return hasDeceptiveCharacters(text) && h('p', { className: 'warning', testId }, DECEPTION_WARNINGS[kind])
}
