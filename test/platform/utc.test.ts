// toIso writes an instant as Date.prototype.toISOString does, from its own calendar arithmetic.
import assert from 'node:assert/strict'
import { it } from 'node:test'
import { toIso, utcDay, utcMonth } from '../../src/platform/utc.js'

const DAY_MS = 86_400_000

/** Date.UTC for any year: Date.UTC reads years 0 to 99 as 1900 to 1999. */
function utc(year: number, month: number, day: number, ...time: number[]): number {
  const date = new Date(Date.UTC(2000, 0, 1, ...time))
  date.setUTCFullYear(year, month, day)
  return date.getTime()
}

it('writes what toISOString writes, at the edges of days, months, leap years, centuries and its range', () => {
  const edges = [
    0,
    -1,
    1,
    Date.UTC(2000, 1, 29, 23, 59, 59, 999),
    Date.UTC(2000, 2, 1),
    Date.UTC(1900, 1, 28, 12),
    Date.UTC(1900, 2, 1),
    Date.UTC(2100, 1, 28, 23, 59, 59, 999),
    Date.UTC(2100, 2, 1),
    Date.UTC(2026, 11, 31, 23, 59, 59, 999),
    Date.UTC(2027, 0, 1),
    Date.UTC(1969, 11, 31, 23, 59, 59, 999),
    Date.UTC(1600, 1, 29),
    Date.UTC(999, 11, 31, 23, 59, 59, 999),
    utc(1, 0, 1) - 1,
    utc(1, 0, 1),
    utc(99, 11, 31, 23, 59, 59, 999),
    Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    Date.UTC(9999, 11, 31, 23, 59, 59, 999) + 1,
    8.64e15,
    -8.64e15,
    1.5,
    -0.5,
  ]
  for (const ms of edges) assert.equal(toIso(ms), new Date(ms).toISOString(), String(ms))
})

it('writes what toISOString writes for 200,000 instants between the years 1 and 9999', () => {
  const span = utc(9999, 11, 31) - utc(1, 0, 1)
  for (let i = 0; i < 200_000; i++) {
    const ms = utc(1, 0, 1) + Math.floor(Math.random() * span) + (i % DAY_MS)
    const expected = new Date(ms).toISOString()
    if (toIso(ms) !== expected) assert.equal(toIso(ms), expected, String(ms))
  }
})

it('refuses what toISOString refuses', () => {
  assert.throws(() => toIso(Number.NaN), RangeError)
  assert.throws(() => toIso(8.64e15 + 1), RangeError)
})

it('gives the UTC day and month', () => {
  assert.equal(utcDay(Date.UTC(2026, 1, 28, 23, 59, 59, 999)), '2026-02-28')
  assert.equal(utcMonth(Date.UTC(2026, 1, 28, 23, 59, 59, 999)), '2026-02')
})
