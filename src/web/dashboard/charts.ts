// The overview's charts, drawn as inline SVG with createElementNS. Each is drawn at the pixel width of its box
// (so that text keeps its size on a phone and on a laptop) and names its numbers for screen readers.

import { walletName } from '../shared/wallet-names.js'
import type { DailyCounts } from './api.js'

const SVG = 'http://www.w3.org/2000/svg'

type Attributes = Record<string, string | number>

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: (SVGElement | string)[]) {
  const element = document.createElementNS(SVG, tag)
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value))
  for (const child of children) element.append(child)
  return element
}

/** An accessible chart root: the label is what a screen reader says instead of reading every shape. */
function chartRoot(width: number, height: number, label: string, className: string): SVGSVGElement {
  return svg(
    'svg',
    { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': label, class: `chart ${className}` },
    svg('title', {}, label),
  )
}

/** The top of a count axis with four ticks: each tick a round whole number (1, 2, 2.5 or 5 times a power of ten). */
function niceCeiling(value: number): number {
  if (value <= 4) return 4
  const rough = value / 4
  const magnitude = 10 ** Math.floor(Math.log10(rough))
  const factors = magnitude >= 10 ? [1, 2, 2.5, 5, 10] : [1, 2, 5, 10]
  const factor = factors.find((candidate) => candidate * magnitude >= rough) ?? 10
  return factor * magnitude * 4
}

export const DAILY_SERIES = [
  { key: 'signed', label: 'Signed' },
  { key: 'rejected', label: 'Rejected' },
  { key: 'expired', label: 'Expired' },
  { key: 'pending', label: 'Pending' },
] as const

type SeriesKey = (typeof DAILY_SERIES)[number]['key']

/** A day's counts by series: pending is what was created that day and is not resolved yet. */
function countsOf(day: DailyCounts): Record<SeriesKey, number> {
  return {
    signed: day.signed,
    rejected: day.rejected,
    expired: day.expired,
    pending: Math.max(0, day.total - day.signed - day.rejected - day.expired),
  }
}

/** Bars wider than this look like blocks, not days: with few days (a 7-day period, a new project) they stay slim. */
const MAX_BAR_WIDTH = 40

const shortDay = (day: string) =>
  new Date(`${day}T00:00:00Z`).toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' })

/** Daily stacked bars of signed, rejected, expired and pending payloads, with a count axis and day labels (UTC). */
export function dailyBars(daily: DailyCounts[], width: number): SVGSVGElement {
  const height = 240
  // Room above the tallest bar for its total.
  const margin = { top: 20, right: 8, bottom: 40, left: 44 }
  const plotWidth = width - margin.left - margin.right
  const plotHeight = height - margin.top - margin.bottom
  const ceiling = niceCeiling(Math.max(0, ...daily.map((day) => day.total)))
  const scale = (count: number) => (count / ceiling) * plotHeight
  const sum = { signed: 0, rejected: 0, expired: 0, pending: 0 }
  for (const day of daily) for (const [key, count] of Object.entries(countsOf(day))) sum[key as SeriesKey] += count
  const root = chartRoot(
    width,
    height,
    `Payloads per day over ${daily.length} days: ${sum.signed} signed, ${sum.rejected} rejected, ${sum.expired} expired, ${sum.pending} pending`,
    'daily-chart',
  )

  for (let tick = 0; tick <= 4; tick++) {
    const value = (ceiling / 4) * tick
    const y = margin.top + plotHeight - scale(value)
    root.append(
      svg('line', { x1: margin.left, x2: width - margin.right, y1: y, y2: y, class: tick === 0 ? 'axis' : 'grid' }),
      svg('text', { x: margin.left - 6, y: y + 4, 'text-anchor': 'end', class: 'tick' }, String(value)),
    )
  }
  root.append(
    svg(
      'text',
      {
        x: 12,
        y: margin.top + plotHeight / 2,
        transform: `rotate(-90 12 ${margin.top + plotHeight / 2})`,
        'text-anchor': 'middle',
        class: 'axis-title',
      },
      'Payloads',
    ),
    svg('text', { x: margin.left + plotWidth / 2, y: height - 4, 'text-anchor': 'middle', class: 'axis-title' }, 'Day (UTC)'),
  )

  const step = plotWidth / Math.max(1, daily.length)
  const barWidth = Math.min(MAX_BAR_WIDTH, Math.max(2, step * 0.7))
  // With room, each day's total stands above its bar: a chart of one busy day still reads at a glance.
  const showTotals = step >= 22
  const labelEvery = Math.ceil(daily.length / Math.max(2, Math.floor(plotWidth / 64)))
  daily.forEach((day, index) => {
    const x = margin.left + index * step + (step - barWidth) / 2
    const group = svg(
      'g',
      { class: 'day' },
      svg(
        'title',
        {},
        `${day.day}: ${day.signed} signed, ${day.rejected} rejected, ${day.expired} expired, ${countsOf(day).pending} pending`,
      ),
    )
    let base = margin.top + plotHeight
    const counts = countsOf(day)
    for (const series of DAILY_SERIES) {
      const barHeight = scale(counts[series.key])
      if (barHeight <= 0) continue
      base -= barHeight
      group.append(svg('rect', { x, y: base, width: barWidth, height: barHeight, class: `bar bar-${series.key}` }))
    }
    if (showTotals && day.total > 0) {
      group.append(svg('text', { x: x + barWidth / 2, y: base - 4, 'text-anchor': 'middle', class: 'value' }, String(day.total)))
    }
    root.append(group)
    const fromEnd = daily.length - 1 - index
    if (fromEnd % labelEvery === 0) {
      // The newest day's label ends at its bar rather than running past the chart's edge.
      const anchor = fromEnd === 0 ? { x: x + barWidth, 'text-anchor': 'end' } : { x: x + barWidth / 2, 'text-anchor': 'middle' }
      root.append(svg('text', { ...anchor, y: margin.top + plotHeight + 16, class: 'tick' }, shortDay(day.day)))
    }
  })
  return root
}

/** Signed payloads by wallet: one horizontal bar each, largest first, with its count. */
export function walletBars(breakdown: { walletAdapter: string; count: number }[], width: number): SVGSVGElement {
  const row = 30
  const labelWidth = Math.min(140, Math.round(width * 0.35))
  const countWidth = 48
  const height = Math.max(1, breakdown.length) * row + 4
  const largest = Math.max(1, ...breakdown.map((wallet) => wallet.count))
  const barSpace = width - labelWidth - countWidth
  const root = chartRoot(
    width,
    height,
    `Signed payloads by wallet: ${breakdown.map((wallet) => `${walletName(wallet.walletAdapter)} ${wallet.count}`).join(', ')}`,
    'wallet-chart',
  )
  breakdown.forEach((wallet, index) => {
    const y = index * row + 4
    const barWidth = Math.max(2, (wallet.count / largest) * barSpace)
    root.append(
      svg('text', { x: labelWidth - 8, y: y + 17, 'text-anchor': 'end', class: 'label' }, walletName(wallet.walletAdapter)),
      svg('rect', { x: labelWidth, y: y + 4, width: barWidth, height: row - 10, rx: 3, class: 'bar bar-wallet' }),
      svg('text', { x: labelWidth + barWidth + 6, y: y + 17, class: 'value' }, String(wallet.count)),
    )
  })
  return root
}

/** The signing rate as a ring: the signed share of resolved payloads. */
export function rateRing(rate: number): SVGSVGElement {
  const size = 120
  const radius = 48
  const circumference = 2 * Math.PI * radius
  const center = size / 2
  const root = chartRoot(size, size, `Signing rate ${rate}%`, 'rate-chart')
  root.append(
    svg('circle', { cx: center, cy: center, r: radius, class: 'ring-track' }),
    svg('circle', {
      cx: center,
      cy: center,
      r: radius,
      class: 'ring-value',
      'stroke-dasharray': `${(rate / 100) * circumference} ${circumference}`,
      transform: `rotate(-90 ${center} ${center})`,
    }),
    svg('text', { x: center, y: center + 8, 'text-anchor': 'middle', class: 'ring-text' }, `${rate}%`),
  )
  return root
}

/**
 * This month's payloads against the plan's limit: a flat gauge (square ends, no knob, so that it does not look like a
 * slider) with marks at every quarter, amber from 80% and red at the limit. It shows; it cannot be dragged.
 */
export function usageMeter(used: number, limit: number, width: number, label: string): SVGSVGElement {
  const barHeight = 12
  const height = barHeight + 6
  const share = limit > 0 ? Math.min(1, used / limit) : 1
  const level = share >= 1 ? 'full' : share >= 0.8 ? 'high' : 'ok'
  const root = chartRoot(width, height, label, `usage-meter usage-${level}`)
  root.setAttribute('role', 'meter')
  root.setAttribute('aria-valuemin', '0')
  root.setAttribute('aria-valuemax', String(limit))
  root.setAttribute('aria-valuenow', String(used))
  root.append(
    svg('rect', { x: 0, y: 0, width, height: barHeight, rx: 2, class: 'meter-track' }),
    svg('rect', { x: 0, y: 0, width: Math.max(used > 0 ? 2 : 0, share * width), height: barHeight, rx: 2, class: 'meter-value' }),
  )
  for (const quarter of [0.25, 0.5, 0.75]) {
    const x = Math.round(quarter * width)
    root.append(svg('line', { x1: x, x2: x, y1: barHeight, y2: height, class: 'meter-mark' }))
  }
  return root
}
