// When a failed webhook delivery is tried again: a fixed schedule spanning about a day, with jitter and Retry-After.
const SECOND_MS = 1000
const MINUTE_MS = 60 * SECOND_MS
const HOUR_MS = 60 * MINUTE_MS

/** Delay before attempt n + 1, after n attempts have failed. The first attempt is immediate. */
export const RETRY_DELAYS_MS: readonly number[] = [
  10 * SECOND_MS,
  MINUTE_MS,
  5 * MINUTE_MS,
  30 * MINUTE_MS,
  2 * HOUR_MS,
  6 * HOUR_MS,
  12 * HOUR_MS,
]

/** 8: the immediate attempt and one after each delay; the last comes about 20.6 hours after the event. */
export const MAX_DELIVERY_ATTEMPTS = RETRY_DELAYS_MS.length + 1

/**
 * Each delay moves by up to 10% either way. When a receiver is down, every delivery queued for it fails
 * at about the same time; without jitter their retries would all land on the recovering receiver in the
 * same instant. 10% spreads them out while keeping the documented schedule recognisable.
 */
const RETRY_JITTER_FRACTION = 0.1

/** A receiver's Retry-After is honoured up to this long, so that a delivery still ends within about a day. */
export const MAX_RETRY_AFTER_MS = 24 * HOUR_MS

/**
 * Milliseconds to wait before the next attempt, or null when `attemptsMade` attempts were the last.
 * `random` returns a number in [0, 1) (Math.random in production). `retryAfterMs` is the receiver's
 * Retry-After, used when it asks for longer than the schedule.
 */
export function nextAttemptDelayMs(attemptsMade: number, random: () => number, retryAfterMs?: number): number | null {
  if (!Number.isInteger(attemptsMade) || attemptsMade < 0)
    throw new RangeError(`attemptsMade must be a non-negative integer, got ${attemptsMade}`)
  if (attemptsMade === 0) return 0
  const scheduledMs = RETRY_DELAYS_MS[attemptsMade - 1]
  if (scheduledMs === undefined) return null
  const jitteredMs = Math.round(scheduledMs * (1 + RETRY_JITTER_FRACTION * (2 * random() - 1)))
  if (retryAfterMs === undefined || retryAfterMs <= jitteredMs) return jitteredMs
  return Math.min(retryAfterMs, MAX_RETRY_AFTER_MS)
}

const DAY_NAME = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)'
const LONG_DAY_NAME = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)'
const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)'
const TIME = '\\d{2}:\\d{2}:\\d{2}'
const DELTA_SECONDS = /^\d+$/
// The three HTTP-date forms a recipient must accept (RFC 9110 section 5.6.7).
const IMF_FIXDATE = new RegExp(`^${DAY_NAME}, \\d{2} ${MONTH} \\d{4} ${TIME} GMT$`)
const RFC850_DATE = new RegExp(`^${LONG_DAY_NAME}, \\d{2}-${MONTH}-\\d{2} ${TIME} GMT$`)
const ASCTIME_DATE = new RegExp(`^${DAY_NAME} ${MONTH} [ \\d]\\d ${TIME} \\d{4}$`)

/**
 * A Retry-After header value (delta-seconds or HTTP-date) as milliseconds from `nowMs`; a date in the past
 * gives 0. Undefined when the header is absent or malformed: a malformed value is ignored, not trusted.
 */
export function parseRetryAfter(headerValue: string | undefined, nowMs: number): number | undefined {
  if (headerValue === undefined) return undefined
  const value = headerValue.trim()
  if (DELTA_SECONDS.test(value)) return Number(value) * SECOND_MS
  let dateMs: number
  if (IMF_FIXDATE.test(value) || RFC850_DATE.test(value)) dateMs = Date.parse(value)
  else if (ASCTIME_DATE.test(value)) dateMs = Date.parse(`${value} GMT`)
  else return undefined
  if (Number.isNaN(dateMs)) return undefined
  return Math.max(0, dateMs - nowMs)
}
