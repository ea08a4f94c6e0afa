import assert from 'node:assert/strict'
import { it } from 'node:test'
import { periodDays, signingRate, summarizeAnalytics } from '../../../src/features/projects/analytics.js'

it('a period is the UTC days ending today, oldest first, across month and year ends and leap days', () => {
  assert.deepEqual(periodDays('7d', Date.UTC(2026, 0, 3, 0, 0, 0, 1)), [
    '2025-12-28',
    '2025-12-29',
    '2025-12-30',
    '2025-12-31',
    '2026-01-01',
    '2026-01-02',
    '2026-01-03',
  ])
  const leap = periodDays('30d', Date.UTC(2028, 2, 1, 23, 59, 59, 999))
  assert.equal(leap.length, 30)
  assert.deepEqual([leap[0], leap[27], leap[28], leap[29]], ['2028-02-01', '2028-02-28', '2028-02-29', '2028-03-01'])
})

it('the signing rate is signed over resolved, as a rounded percent, and 0 when nothing is resolved', () => {
  assert.equal(signingRate({ signed: 0, rejected: 0, expired: 0 }), 0)
  assert.equal(signingRate({ signed: 1, rejected: 7, expired: 0 }), 13)
  assert.equal(signingRate({ signed: 2, rejected: 0, expired: 1 }), 67)
  assert.equal(signingRate({ signed: 5, rejected: 0, expired: 0 }), 100)
  assert.equal(signingRate({ signed: 0, rejected: 3, expired: 4 }), 0)
})

it('summarizes rollup rows: only the period, pending in totals only, wallets of signed payloads by count then name', () => {
  const days = ['2026-01-01', '2026-01-02']
  const result = summarizeAnalytics('7d', days, [
    { day: '2025-12-31', status: 'signed', walletAdapter: 'xaman', count: 50 },
    { day: '2026-01-01', status: 'signed', walletAdapter: 'xaman', count: 2 },
    { day: '2026-01-01', status: 'signed', walletAdapter: 'crossmark', count: 2 },
    { day: '2026-01-01', status: 'signed', walletAdapter: 'gemwallet', count: 3 },
    { day: '2026-01-01', status: 'rejected', walletAdapter: 'xaman', count: 1 },
    { day: '2026-01-01', status: 'pending', walletAdapter: '', count: 0 },
    { day: '2026-01-02', status: 'pending', walletAdapter: '', count: 4 },
    { day: '2026-01-02', status: 'expired', walletAdapter: '', count: 2 },
  ])
  assert.deepEqual(result, {
    period: '7d',
    totals: { total: 14, signed: 7, rejected: 1, expired: 2, pending: 4, signingRate: 70 },
    walletBreakdown: [
      { walletAdapter: 'gemwallet', count: 3 },
      { walletAdapter: 'crossmark', count: 2 },
      { walletAdapter: 'xaman', count: 2 },
    ],
    daily: [
      { day: '2026-01-01', total: 8, signed: 7, rejected: 1, expired: 0 },
      { day: '2026-01-02', total: 6, signed: 0, rejected: 0, expired: 2 },
    ],
  })
})
