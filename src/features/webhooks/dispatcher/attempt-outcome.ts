// What follows a delivery attempt: success, a retry on the schedule, failure (with or without an alert to the
// project's owner), or failure that disables the webhook. The dispatcher's decisions, as pure functions: the
// dispatcher records what they return.
import { TEST_DELIVERY_MAX_ATTEMPTS, WEBHOOK_TEST_EVENT } from '../model.js'
import type { WebhookSendResult } from '../send.js'
import { MAX_DELIVERY_ATTEMPTS, nextAttemptDelayMs, parseRetryAfter } from './retry-schedule.js'

export const GONE_REASON = 'the receiver answered 410 Gone'

export interface DeliveryAttempt {
  /** The delivery's event: a payload event, or WEBHOOK_TEST_EVENT. */
  event: string
  /** Null for a test delivery. */
  payloadUuid: string | null
  /** Attempts made in the current series, this one included. */
  attempts: number
  result: Pick<WebhookSendResult, 'ok' | 'statusCode' | 'retryAfter'>
  nowMs: number
}

export type AttemptOutcome =
  /** The receiver answered 2xx. */
  | { kind: 'succeeded'; statusCode: number }
  /** Tried again at `nextAttemptAtMs`. */
  | { kind: 'retry'; nextAttemptAtMs: number }
  /** That was the last attempt. `alert`: the project's owner is mailed (a payload's delivery, not a test). */
  | { kind: 'failed'; alert: boolean }
  /** The receiver answered 410 Gone: the delivery fails at once and the webhook is disabled, its waiting deliveries cancelled. */
  | { kind: 'disable-webhook'; reason: string }

/** `random` returns a number in [0, 1): the retry schedule's jitter. */
export function attemptOutcome(attempt: DeliveryAttempt, random: () => number): AttemptOutcome {
  const { result, nowMs } = attempt
  if (result.ok) return { kind: 'succeeded', statusCode: result.statusCode ?? 200 }
  if (result.statusCode === 410) return { kind: 'disable-webhook', reason: GONE_REASON }
  const isTest = attempt.event === WEBHOOK_TEST_EVENT
  const maxAttempts = isTest ? TEST_DELIVERY_MAX_ATTEMPTS : MAX_DELIVERY_ATTEMPTS
  const delayMs =
    attempt.attempts < maxAttempts ? nextAttemptDelayMs(attempt.attempts, random, parseRetryAfter(result.retryAfter, nowMs)) : null
  if (delayMs !== null) return { kind: 'retry', nextAttemptAtMs: nowMs + delayMs }
  return { kind: 'failed', alert: !isTest && attempt.payloadUuid !== null }
}

/** A webhook whose every delivery failed for this long is disabled, and the project's owner is told. */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * 60 * 60 * 1000

/** The disabled reason of a webhook that failed for DISABLE_AFTER_FAILING_MS. */
export const FAILING_TOO_LONG_REASON = 'every delivery failed for 5 days'

/**
 * Whether a failed attempt at `nowMs` disables its webhook: its run of failures (every attempt failed since
 * `failingSinceMs`, the first failure after its last success, this attempt included) has lasted 5 days.
 */
export function failingTooLong(failingSinceMs: number, nowMs: number): boolean {
  return nowMs - failingSinceMs >= DISABLE_AFTER_FAILING_MS
}
