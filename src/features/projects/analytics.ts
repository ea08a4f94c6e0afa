// Analytics maths (docs/interface.md §4): per-day and per-period counts of a project's payloads by their current
// status, the signing rate, and which wallets signed. Input is the daily rollup; no I/O here.
import { utcDay } from '../../platform/utc.js'
import type { Analytics, DailyAnalytics } from './schemas.js'

export const ANALYTICS_PERIODS = ['30d', '7d'] as const
export type AnalyticsPeriod = (typeof ANALYTICS_PERIODS)[number]
export const DEFAULT_ANALYTICS_PERIOD: AnalyticsPeriod = '30d'

const PERIOD_DAYS: Record<AnalyticsPeriod, number> = { '30d': 30, '7d': 7 }
const DAY_MS = 86_400_000

/** One rollup row: payloads created on `day` (UTC) that are now in `status`, resolved with `walletAdapter` ('' for none). */
export interface DailyCount {
  day: string
  status: string
  walletAdapter: string
  count: number
}

/** The UTC days of a period that ends today (the day of `nowMs`), oldest first. */
export function periodDays(period: AnalyticsPeriod, nowMs: number): string[] {
  const days = PERIOD_DAYS[period]
  return Array.from({ length: days }, (_, i) => utcDay(nowMs - (days - 1 - i) * DAY_MS))
}

/** Percent of resolved payloads that were signed, rounded; 0 when none is resolved. */
export function signingRate(counts: { signed: number; rejected: number; expired: number }): number {
  const resolved = counts.signed + counts.rejected + counts.expired
  return resolved === 0 ? 0 : Math.round((100 * counts.signed) / resolved)
}

/** Builds the response from the rollup rows of `days` (rows of other days are ignored); every day appears, zero-filled. */
export function summarizeAnalytics(period: AnalyticsPeriod, days: string[], rows: DailyCount[]): Analytics {
  const daily = new Map<string, DailyAnalytics>(days.map((day) => [day, { day, total: 0, signed: 0, rejected: 0, expired: 0 }]))
  const totals = { total: 0, signed: 0, rejected: 0, expired: 0, pending: 0 }
  const wallets = new Map<string, number>()
  for (const row of rows) {
    const entry = daily.get(row.day)
    if (!entry || row.count === 0) continue
    entry.total += row.count
    totals.total += row.count
    if (row.status === 'signed' || row.status === 'rejected' || row.status === 'expired') {
      entry[row.status] += row.count
      totals[row.status] += row.count
    } else if (row.status === 'pending') {
      totals.pending += row.count
    }
    if (row.status === 'signed') wallets.set(row.walletAdapter, (wallets.get(row.walletAdapter) ?? 0) + row.count)
  }
  const walletBreakdown = [...wallets]
    .filter(([, count]) => count > 0)
    .map(([walletAdapter, count]) => ({ walletAdapter, count }))
    .sort((a, b) => b.count - a.count || (a.walletAdapter < b.walletAdapter ? -1 : a.walletAdapter > b.walletAdapter ? 1 : 0))
  return { period, totals: { ...totals, signingRate: signingRate(totals) }, walletBreakdown, daily: [...daily.values()] }
}
