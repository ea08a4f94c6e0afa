// Time is injected so that expiry, rate limits and retry schedules are tested without sleeping.
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** A clock that moves only when told; for tests. */
export class ManualClock implements Clock {
  constructor(private currentMs: number = Date.UTC(2026, 0, 15, 12, 0, 0)) {}
  now(): number {
    return this.currentMs
  }
  advance(ms: number): void {
    this.currentMs += ms
  }
  set(ms: number): void {
    this.currentMs = ms
  }
}

const DAY_MS = 86_400_000
/** 0001-01-01 to 9999-12-31: where toISOString writes four digits for the year. */
const MIN_FORMATTED_MS = -62_135_596_800_000
const MAX_FORMATTED_MS = 253_402_300_799_999
const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0'))
const THREE_DIGITS = Array.from({ length: 1000 }, (_, n) => String(n).padStart(3, '0'))

/**
 * The instant as Date.prototype.toISOString writes it (`2026-01-15T12:00:00.000Z`). Written here from the calendar
 * arithmetic: V8 formats toISOString through a printf, which cost about 1 µs a call on the slower development
 * machine, two of them in every payload's view (docs/performance.md, "2026-11-26, evening"). Other values (fractions,
 * years outside 1 to 9999, NaN) go to toISOString, which throws for NaN as before.
 */
export function toIso(ms: number): string {
  if (!Number.isInteger(ms) || ms < MIN_FORMATTED_MS || ms > MAX_FORMATTED_MS) return new Date(ms).toISOString()
  const days = Math.floor(ms / DAY_MS)
  let rest = ms - days * DAY_MS
  // Days since 1970-01-01 to the proleptic Gregorian date (H. Hinnant's civil_from_days), in 400-year eras from 0000-03-01.
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const dayOfEra = z - era * 146_097
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  )
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100))
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153)
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
  const hours = Math.floor(rest / 3_600_000)
  rest -= hours * 3_600_000
  const minutes = Math.floor(rest / 60_000)
  rest -= minutes * 60_000
  const seconds = Math.floor(rest / 1000)
  const millis = rest - seconds * 1000
  return `${year >= 1000 ? year : String(year).padStart(4, '0')}-${TWO_DIGITS[month]}-${TWO_DIGITS[day]}T${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}.${THREE_DIGITS[millis]}Z`
}

/** UTC calendar day, YYYY-MM-DD. */
export function utcDay(ms: number): string {
  return toIso(ms).slice(0, 10)
}

/** UTC calendar month, YYYY-MM. */
export function utcMonth(ms: number): string {
  return toIso(ms).slice(0, 7)
}
