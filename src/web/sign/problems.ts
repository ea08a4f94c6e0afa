// What the page tells the user when approving or rejecting fails: plain words per cause, the service's own message,
// and its details for a signature that did not verify. Pure: no DOM.
import type { FieldError } from '../../platform/errors.js'
import { ApiError } from '../shared/api-client.js'

export interface Problem {
  title: string
  message: string
  details: FieldError[]
  /** The HTTP status, or "wallet" when the wallet itself failed or the user declined in it. */
  kind: string
  /** 'caution' for a transaction that may still reach the ledger (nothing failed: wait), 'error' for the rest. */
  tone: 'error' | 'caution'
}

/** walletLabel names the wallet that was asked to sign, when the failure came while approving. */
export function describeFailure(error: unknown, walletLabel: string | undefined): Problem {
  if (!(error instanceof ApiError)) {
    return {
      title: walletLabel === undefined ? 'Something went wrong' : `${walletLabel} did not sign`,
      message: messageOf(error),
      details: [],
      kind: 'wallet',
      tone: 'error',
    }
  }
  const { status, message, details } = error
  const problem = (title: string, text: string, withDetails = false): Problem => ({
    title,
    message: text,
    details: withDetails ? details : [],
    kind: String(status),
    tone: 'error',
  })
  switch (status) {
    case 422:
      // The ledger refused what the wallet signed as asked: its one detail says why and what to do, once.
      if (message.startsWith(LEDGER_REFUSAL))
        return problem('The XRP Ledger refused this transaction', fullStop(details[0]?.message ?? message))
      // The ledger holds it already, submitted elsewhere: it was applied, and must not be paid again.
      if (message.startsWith(LEDGER_HOLDS_IT)) return problem('This transaction is already on the XRP Ledger', fullStop(message))
      return problem('The wallet returned something other than what was asked', message, true)
    case 502:
      // The service's message says what could not be reached, never which setting is missing (the log says that).
      return problem('This could not be completed right now', sentence(message), true)
    case 409:
      if (error.submissionInDoubt) return { ...problem(IN_DOUBT_TITLE, message), tone: 'caution' }
      return problem('This request was already answered', message)
    case 410:
      return problem('This request has expired', message)
    case 404:
      return problem('This signing request no longer exists', message)
    case 429:
      return problem('Too many attempts', 'Wait a few seconds, then try again.')
    case 0:
      return problem('Countersign could not be reached', `${message}. Check your connection and try again.`)
    default:
      return problem('Countersign could not take the answer', `${message}. You can try again.`, true)
  }
}

const IN_DOUBT_TITLE = 'Your transaction may already be on its way'

/** How the service's 422s begin (features/signing/approve/submit-transaction.ts): the XRP Ledger refused a submission, or holds it already. */
const LEDGER_REFUSAL = 'The XRP Ledger refused '
const LEDGER_HOLDS_IT = 'The XRP Ledger already holds '

/**
 * A request the page learns is in doubt without having been refused (opened again, or submitted from another device):
 * the caution its 409 would bring.
 */
export function submissionInDoubt(): Problem {
  return {
    title: IN_DOUBT_TITLE,
    message:
      'A transaction signed for this request was submitted and may still reach the XRP Ledger. This page shows the outcome once it is known: do not sign again.',
    details: [],
    kind: '409',
    tone: 'caution',
  }
}

/** The message of anything thrown: an Error's own, or the value as text. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** A message as a sentence: a capital first letter and a full stop. */
function sentence(text: string): string {
  const trimmed = text.trim()
  return fullStop(trimmed.charAt(0).toUpperCase() + trimmed.slice(1))
}

/** A message ending in a full stop (one that begins with the ledger's result code keeps its case). */
function fullStop(text: string): string {
  const trimmed = text.trim()
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`
}
