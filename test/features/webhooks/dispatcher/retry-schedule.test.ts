import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  MAX_DELIVERY_ATTEMPTS,
  MAX_RETRY_AFTER_MS,
  nextAttemptDelayMs,
  parseRetryAfter,
  RETRY_DELAYS_MS,
} from '../../../../src/features/webhooks/dispatcher/retry-schedule.js'

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
const noJitter = () => 0.5

describe('the retry schedule', () => {
  it('is 8 attempts: immediately, then after 10 s, 1 min, 5 min, 30 min, 2 h, 6 h and 12 h', () => {
    assert.equal(MAX_DELIVERY_ATTEMPTS, 8)
    assert.equal(nextAttemptDelayMs(0, noJitter), 0)
    const delays = [1, 2, 3, 4, 5, 6, 7].map((attemptsMade) => nextAttemptDelayMs(attemptsMade, noJitter))
    assert.deepEqual(delays, [10 * SECOND, MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR, 12 * HOUR])
  })

  it('puts the last attempt about a day after the event', () => {
    const spanMs = RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay, 0)
    assert.ok(spanMs > 20 * HOUR && spanMs < 24 * HOUR, `span ${spanMs / HOUR} h`)
  })

  it('stops after the eighth attempt', () => {
    assert.equal(nextAttemptDelayMs(8, noJitter), null)
    assert.equal(nextAttemptDelayMs(9, noJitter), null)
    assert.equal(nextAttemptDelayMs(8, noJitter, 60 * SECOND), null)
  })

  it('moves each delay by at most 10% either way', () => {
    assert.equal(
      nextAttemptDelayMs(1, () => 0),
      9 * SECOND,
    )
    assert.equal(
      nextAttemptDelayMs(7, () => 0),
      10.8 * HOUR,
    )
    const highest = nextAttemptDelayMs(2, () => 0.999999)
    assert.ok(highest !== null && highest <= 66 * SECOND && highest > 65.9 * SECOND, String(highest))
    const spread = new Set(Array.from({ length: 50 }, () => nextAttemptDelayMs(3, Math.random)))
    assert.ok(spread.size > 40, 'Math.random spreads retries')
    for (const delay of spread) assert.ok(delay !== null && delay >= 4.5 * MINUTE && delay <= 5.5 * MINUTE)
  })

  it('honours a Retry-After longer than the scheduled delay, capped at 24 h', () => {
    assert.equal(nextAttemptDelayMs(1, noJitter, 5 * SECOND), 10 * SECOND)
    assert.equal(nextAttemptDelayMs(1, noJitter, 90 * SECOND), 90 * SECOND)
    assert.equal(nextAttemptDelayMs(1, noJitter, 3 * 24 * HOUR), MAX_RETRY_AFTER_MS)
    assert.equal(MAX_RETRY_AFTER_MS, 24 * HOUR)
  })

  it('rejects a negative or fractional attempt count', () => {
    assert.throws(() => nextAttemptDelayMs(-1, noJitter), RangeError)
    assert.throws(() => nextAttemptDelayMs(1.5, noJitter), RangeError)
  })
})

describe('parseRetryAfter', () => {
  const nowMs = Date.UTC(2026, 0, 15, 12, 0, 0)

  it('reads delta-seconds', () => {
    assert.equal(parseRetryAfter('120', nowMs), 120 * SECOND)
    assert.equal(parseRetryAfter(' 0 ', nowMs), 0)
  })

  it('reads the three HTTP-date forms relative to now', () => {
    assert.equal(parseRetryAfter('Thu, 15 Jan 2026 12:02:00 GMT', nowMs), 2 * MINUTE)
    assert.equal(parseRetryAfter('Thursday, 15-Jan-26 13:00:00 GMT', nowMs), HOUR)
    assert.equal(parseRetryAfter('Thu Jan 15 12:00:30 2026', nowMs), 30 * SECOND)
    assert.equal(parseRetryAfter('Fri Jan  2 12:00:00 2026', nowMs), 0, 'a date in the past means now')
  })

  it('ignores an absent or malformed value', () => {
    for (const value of [undefined, '', 'soon', '-5', '1.5', '2026-01-15T12:02:00Z', 'Thu, 15 Jan 2026 12:02:00 PST']) {
      assert.equal(parseRetryAfter(value, nowMs), undefined, String(value))
    }
  })
})
