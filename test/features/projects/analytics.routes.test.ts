import assert from 'node:assert/strict'
import { after, before, it } from 'node:test'
import type { PayloadRequest } from '../../../src/features/payloads/payload-request.js'
import { type DashboardClient, signedIn } from '../../support/dashboard.js'
import { forEachDatabase } from '../../support/databases.js'
import { DESTINATION } from '../../support/fixtures.js'
import { startTestService, type TestService } from '../../support/service.js'

const DAY_MS = 86_400_000
/** "Today" in these tests: 2026-03-10, noon UTC. Day offsets below count back from it. */
const TODAY_NOON = Date.UTC(2026, 2, 10, 12)
const startOfDay = (offset: number) => Date.UTC(2026, 2, 10 + offset)
const day = (offset: number) => new Date(startOfDay(offset)).toISOString().slice(0, 10)

forEachDatabase('project analytics', (dialect) => {
  let t: TestService
  let alice: DashboardClient
  let projectId: string
  let otherProjectId: string

  before(async () => {
    t = await startTestService(dialect, { listen: true })
    alice = await signedIn(t, 'alice')
    const ctx = t.service.ctx
    const own = await ctx.projects.createProject({ name: 'Shop', plan: 'pro', accountId: alice.accountId })
    const other = await ctx.projects.createProject({ name: 'Other shop', plan: 'pro', accountId: alice.accountId })
    projectId = own.project.id
    otherProjectId = other.project.id

    const message: PayloadRequest = { type: 'signMessage', message: 'Sign in to Shop', options: { expiresIn: 86_400 } }
    const create = async (atMs: number, project = projectId, request = message) => {
      t.clock.set(atMs)
      return (await ctx.payloads.create({ projectId: project, plan: 'pro' }, request)).uuid
    }
    const sign = (uuid: string, walletAdapter: string) =>
      ctx.payloads.resolveSigned(uuid, { walletAdapter, signerAddress: DESTINATION, publicKey: '02AB', signature: 'CD' })
    const signedAt = async (atMs: number, walletAdapter: string, project = projectId) => sign(await create(atMs, project), walletAdapter)
    const rejectedAt = async (atMs: number, walletAdapter?: string) => ctx.payloads.reject(await create(atMs), walletAdapter)

    // Forty days ago: outside both periods.
    await signedAt(startOfDay(-40) + 3_600_000, 'xaman')
    await signedAt(startOfDay(-40) + 7_200_000, 'xaman')
    await rejectedAt(startOfDay(-40) + 9_000_000, 'xaman')
    // The last instant before the 30-day period, and its first instant.
    const justBefore = await create(startOfDay(-29) - 1)
    await signedAt(startOfDay(-29), 'crossmark')
    t.clock.set(startOfDay(-29) + 60_000)
    await sign(justBefore, 'xaman') // resolved inside the period, but created before it
    // Created on day -10, signed the next day: it counts on the day it was created.
    const overnight = await create(startOfDay(-10) + 23 * 3_600_000)
    t.clock.set(startOfDay(-9) + 3_600_000)
    await sign(overnight, 'xaman')
    // The last instant before the 7-day period, and its first instant.
    await rejectedAt(startOfDay(-6) - 1, 'gemwallet')
    await signedAt(startOfDay(-6), 'gemwallet')
    // Three days ago: every outcome.
    const d3 = startOfDay(-3) + 10 * 3_600_000
    for (const wallet of ['xaman', 'xaman', 'xaman', 'crossmark']) await signedAt(d3, wallet)
    await rejectedAt(d3, 'xaman')
    await rejectedAt(d3)
    const cancelled = await create(d3)
    await ctx.payloads.cancel(projectId, cancelled)
    await create(d3, projectId, { ...message, options: { expiresIn: 60 } })
    t.clock.set(d3 + 61_000)
    assert.equal(await ctx.payloads.expireOverdue(), 1)
    await signedAt(d3, 'xaman', otherProjectId) // another project's payload never counts here
    // Today: two still pending, one signed.
    await create(TODAY_NOON - 3_600_000)
    await create(TODAY_NOON - 1_800_000)
    await signedAt(TODAY_NOON - 600_000, 'xaman')
    t.clock.set(TODAY_NOON)
    alice = await signedIn(t, 'alice') // a session of today; the first one ran out while the history was written
  })
  after(() => t.stop())

  const analytics = (query = '') => alice.get(`/api/v1/projects/${projectId}/analytics${query}`)
  const zeroFilled = (
    offsets: number[],
    counts: Record<number, { signed?: number; rejected?: number; expired?: number; pending?: number }>,
  ) =>
    offsets.map((offset) => {
      const { signed = 0, rejected = 0, expired = 0, pending = 0 } = counts[offset] ?? {}
      return { day: day(offset), total: signed + rejected + expired + pending, signed, rejected, expired }
    })
  const range = (from: number) => Array.from({ length: 1 - from }, (_, i) => from + i)

  it('reports the last 30 UTC days by default, exactly in the shape of docs/interface.md §4', async () => {
    const response = await analytics()
    assert.equal(response.status, 200)
    assert.equal(response.body.daily.length, 30)
    assert.equal(response.body.daily[0].day, '2026-02-09')
    assert.equal(response.body.daily[29].day, '2026-03-10')
    assert.deepEqual(response.body, {
      period: '30d',
      totals: { total: 15, signed: 8, rejected: 3, expired: 2, pending: 2, signingRate: 62 },
      walletBreakdown: [
        { walletAdapter: 'xaman', count: 5 },
        { walletAdapter: 'crossmark', count: 2 },
        { walletAdapter: 'gemwallet', count: 1 },
      ],
      daily: zeroFilled(range(-29), {
        [-29]: { signed: 1 },
        [-10]: { signed: 1 },
        [-7]: { rejected: 1 },
        [-6]: { signed: 1 },
        [-3]: { signed: 4, rejected: 2, expired: 2 },
        0: { signed: 1, pending: 2 },
      }),
    })
    assert.equal(JSON.stringify(await analytics('?period=30d')), JSON.stringify(response))
  })

  it('reports the last 7 UTC days; ties in the wallet breakdown go by name', async () => {
    const response = await analytics('?period=7d')
    assert.equal(response.status, 200)
    assert.deepEqual(response.body, {
      period: '7d',
      totals: { total: 12, signed: 6, rejected: 2, expired: 2, pending: 2, signingRate: 60 },
      walletBreakdown: [
        { walletAdapter: 'xaman', count: 4 },
        { walletAdapter: 'crossmark', count: 1 },
        { walletAdapter: 'gemwallet', count: 1 },
      ],
      daily: zeroFilled(range(-6), { [-6]: { signed: 1 }, [-3]: { signed: 4, rejected: 2, expired: 2 }, 0: { signed: 1, pending: 2 } }),
    })
  })

  it('moves with the UTC day: at 23:59:59.999 today is still in the period, at midnight the oldest day leaves', async () => {
    t.clock.set(startOfDay(1) - 1)
    const lastInstant = (await analytics('?period=7d')).body
    assert.equal(lastInstant.daily[0].day, day(-6))
    assert.equal(lastInstant.totals.total, 12)
    t.clock.set(startOfDay(1))
    const nextDay = (await analytics('?period=7d')).body
    assert.equal(nextDay.daily[0].day, day(-5))
    assert.equal(nextDay.daily[6].day, day(1))
    assert.deepEqual(nextDay.daily[6], { day: day(1), total: 0, signed: 0, rejected: 0, expired: 0 })
    assert.deepEqual(nextDay.totals, { total: 11, signed: 5, rejected: 2, expired: 2, pending: 2, signingRate: 56 })
    t.clock.set(TODAY_NOON)
  })

  it('follows the current status: a pending payload that expires moves from pending to expired on its creation day', async () => {
    t.clock.set(TODAY_NOON + DAY_MS)
    await t.service.ctx.payloads.expireOverdue()
    t.clock.set(startOfDay(1) - 1)
    const { totals, daily } = (await analytics('?period=7d')).body
    assert.deepEqual(totals, { total: 12, signed: 6, rejected: 2, expired: 4, pending: 0, signingRate: 50 })
    assert.deepEqual(daily[6], { day: day(0), total: 3, signed: 1, rejected: 0, expired: 2 })
    t.clock.set(TODAY_NOON)
  })

  it('a project with no payloads has every day at zero and a signing rate of 0', async () => {
    const { project } = await t.service.ctx.projects.createProject({ name: 'Empty', accountId: alice.accountId })
    const response = await alice.get(`/api/v1/projects/${project.id}/analytics?period=7d`)
    assert.deepEqual(response.body, {
      period: '7d',
      totals: { total: 0, signed: 0, rejected: 0, expired: 0, pending: 0, signingRate: 0 },
      walletBreakdown: [],
      daily: zeroFilled(range(-6), {}),
    })
  })

  it('any other period is 422 with details', async () => {
    for (const period of ['90d', '1d', '30', '']) {
      const response = await analytics(`?period=${period}`)
      assert.equal(response.status, 422, period)
      assert.deepEqual(response.body, { error: 'Validation failed', details: [{ field: 'period', message: 'must be one of 30d, 7d' }] })
    }
    const unknown = await analytics('?from=2026-01-01')
    assert.equal(unknown.status, 422)
    assert.deepEqual(unknown.body.details, [{ field: 'from', message: 'is not a known query parameter' }])
  })
})
