import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  type AttemptOutcome,
  attemptOutcome,
  type DeliveryAttempt,
  failingTooLong,
} from '../../../../src/features/webhooks/dispatcher/attempt-outcome.js'
import { MAX_DELIVERY_ATTEMPTS, MAX_RETRY_AFTER_MS, RETRY_DELAYS_MS } from '../../../../src/features/webhooks/dispatcher/retry-schedule.js'

const NOW = Date.UTC(2026, 0, 15, 12)
const noJitter = () => 0.5
const PAYLOAD_UUID = '6f1c2a4e-8b3d-4c5e-9f7a-1b2c3d4e5f60'

function after(attempts: number, result: Partial<DeliveryAttempt['result']>, delivery: Partial<DeliveryAttempt> = {}): AttemptOutcome {
  return attemptOutcome(
    {
      event: 'payload.signed',
      payloadUuid: PAYLOAD_UUID,
      attempts,
      nowMs: NOW,
      ...delivery,
      result: { ok: false, statusCode: 500, retryAfter: undefined, ...result },
    },
    noJitter,
  )
}

describe('what follows a delivery attempt', () => {
  it('records a 2xx as succeeded, with its status, whatever the attempt', () => {
    assert.deepEqual(after(1, { ok: true, statusCode: 204 }), { kind: 'succeeded', statusCode: 204 })
    assert.deepEqual(after(MAX_DELIVERY_ATTEMPTS, { ok: true, statusCode: 200 }), { kind: 'succeeded', statusCode: 200 })
  })

  it('retries a failure on the schedule until the eighth attempt', () => {
    for (let attempts = 1; attempts < MAX_DELIVERY_ATTEMPTS; attempts++) {
      assert.deepEqual(after(attempts, { statusCode: 503 }), { kind: 'retry', nextAttemptAtMs: NOW + (RETRY_DELAYS_MS[attempts - 1] ?? 0) })
    }
    assert.deepEqual(
      after(2, { statusCode: null }),
      { kind: 'retry', nextAttemptAtMs: NOW + 60_000 },
      'a timeout or refused connection too',
    )
  })

  it("waits as long as the receiver's Retry-After asks when that is longer than the schedule, up to a day", () => {
    assert.deepEqual(after(1, { statusCode: 429, retryAfter: '120' }), { kind: 'retry', nextAttemptAtMs: NOW + 120_000 })
    assert.deepEqual(after(1, { statusCode: 429, retryAfter: '1' }), { kind: 'retry', nextAttemptAtMs: NOW + 10_000 })
    assert.deepEqual(after(1, { statusCode: 503, retryAfter: String(7 * 86_400) }), {
      kind: 'retry',
      nextAttemptAtMs: NOW + MAX_RETRY_AFTER_MS,
    })
  })

  it('ignores a Retry-After on the last attempt: the delivery fails and the owner is alerted', () => {
    assert.deepEqual(after(MAX_DELIVERY_ATTEMPTS, { statusCode: 429, retryAfter: '60' }), { kind: 'failed', alert: true })
  })

  it('fails a test delivery after its one attempt, without an alert', () => {
    assert.deepEqual(after(1, { statusCode: 500 }, { event: 'webhook.test', payloadUuid: null }), { kind: 'failed', alert: false })
  })

  it('disables the webhook when its receiver answers 410 Gone, at any attempt, test deliveries included', () => {
    const disabled = { kind: 'disable-webhook', reason: 'the receiver answered 410 Gone' }
    assert.deepEqual(after(1, { statusCode: 410 }), disabled)
    assert.deepEqual(after(MAX_DELIVERY_ATTEMPTS, { statusCode: 410 }), disabled)
    assert.deepEqual(after(1, { statusCode: 410 }, { event: 'webhook.test', payloadUuid: null }), disabled)
  })
})

describe('whether a failed attempt disables its webhook', () => {
  const DAY_MS = 86_400_000
  it('does once every attempt has failed for 5 days, and not a millisecond before', () => {
    assert.equal(failingTooLong(NOW, NOW), false, 'the first failure')
    assert.equal(failingTooLong(NOW - 5 * DAY_MS + 1, NOW), false)
    assert.equal(failingTooLong(NOW - 5 * DAY_MS, NOW), true)
    assert.equal(failingTooLong(NOW - 30 * DAY_MS, NOW), true)
  })
})
