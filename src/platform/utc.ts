// Instants as the API writes them: ISO 8601 in UTC, and the UTC day and month that usage and analytics are counted by.
// The time itself comes from a Clock (clock.ts).

const DAY_MS = 86_400_000
/** 0001-01-01 to 9999-12-31: where toISOString writes four digits for the year. */
const MIN_FORMATTED_MS = -62_135_596_800_000
const MAX_FORMATTED_MS = 253_402_300_799_999

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
  const yyyy = year >= 1000 ? year : String(year).padStart(4, '0')
  const sss = millis >= 100 ? millis : millis >= 10 ? `0${millis}` : `00${millis}`
  return `${yyyy}-${twoDigits(month)}-${twoDigits(day)}T${twoDigits(hours)}:${twoDigits(minutes)}:${twoDigits(seconds)}.${sss}Z`
}

function twoDigits(value: number): string | number {
  return value >= 10 ? value : `0${value}`
}

/** UTC calendar day, YYYY-MM-DD. */
export function utcDay(ms: number): string {
  return toIso(ms).slice(0, 10)
}

/** UTC calendar month, YYYY-MM. */
export function utcMonth(ms: number): string {
  return toIso(ms).slice(0, 7)
}
