// A project's usage overview: this month against the plan's limit, the signing rate, payloads per day and the
// wallets that signed, over the last 7 or 30 UTC days.
import { ANALYTICS_PERIODS, DEFAULT_ANALYTICS_PERIOD } from '../../../features/projects/analytics.js'
import { type Analytics, api, type Period, type ProjectDetail } from '../api.js'
import { DAILY_SERIES, dailyBars, rateRing, usageMeter, walletBars } from '../charts.js'
import { type PageContext, projectFrame } from '../page.js'
import { paths } from '../router.js'
import { button, emptyState, firstPayloadCurl, h, link, replaceChildren } from '../ui.js'

/** Shortest first. A Record, so that a period the server adds cannot go without a label. */
const PERIOD_LABELS: Record<Period, string> = { '7d': '7 days', '30d': '30 days' }

export async function overviewPage(view: HTMLElement, context: PageContext, projectId: string): Promise<void> {
  const requested = new URLSearchParams(location.search).get('period')
  const period = ANALYTICS_PERIODS.find((known) => known === requested) ?? DEFAULT_ANALYTICS_PERIOD
  const [project, analytics, newest] = await Promise.all([
    api.project(projectId),
    api.analytics(projectId, period),
    api.payloads(projectId, { limit: 1, offset: 0 }),
  ])
  if (!context.isCurrent()) return

  const periodSwitch = h(
    'div',
    { className: 'switch', testId: 'period-switch', attrs: { role: 'group', 'aria-label': 'Period' } },
    ...(Object.entries(PERIOD_LABELS) as [Period, string][]).map(([value, label]) =>
      button(
        label,
        () => context.navigate(`${paths.project(projectId)}${value === DEFAULT_ANALYTICS_PERIOD ? '' : `?period=${value}`}`, true),
        {
          className: 'button secondary',
          attrs: { 'aria-pressed': String(value === period) },
        },
      ),
    ),
  )

  const usageBox = h('div', { className: 'chart-box' })
  const usageCard = card(
    'Usage this month',
    'usage',
    h(
      'p',
      { className: 'big-number' },
      `${project.usage.used.toLocaleString()}`,
      h('small', {}, ` of ${project.usage.limit.toLocaleString()} payloads`),
    ),
    usageBox,
    h(
      'p',
      { className: 'muted' },
      `${usedPercent(project)}% used · ${monthName(project.usage.month)} · ${project.plan === 'pro' ? 'Pro' : 'Free'} plan`,
    ),
  )

  // A project with older payloads and none in the period still gets its (empty) charts.
  const nothingYet = newest.payloads.length === 0
  const body = nothingYet ? [usageCard, firstPayloadHelp(project)] : charts(project, analytics, usageCard)
  replaceChildren(
    view,
    ...projectFrame(
      project,
      'overview',
      h('div', { className: 'toolbar' }, h('h2', {}, `Last ${PERIOD_LABELS[period]}`), periodSwitch),
      ...body,
    ),
  )

  const draw = () => {
    replaceChildren(usageBox, usageMeter(project.usage.used, project.usage.limit, widthOf(usageBox), usageLabel(project)))
    const daily = view.querySelector<HTMLElement>('[data-testid="daily-chart"]')
    if (daily) replaceChildren(daily, dailyBars(analytics.daily, widthOf(daily)))
    const wallets = view.querySelector<HTMLElement>('[data-testid="wallet-chart"]')
    if (wallets && analytics.walletBreakdown.length > 0) replaceChildren(wallets, walletBars(analytics.walletBreakdown, widthOf(wallets)))
  }
  draw()
  let pending: number | undefined
  const onResize = () => {
    if (!context.isCurrent()) {
      window.removeEventListener('resize', onResize)
      return
    }
    clearTimeout(pending)
    // The check again when the timer fires: a period switch within the delay renders a new page into the same view,
    // and this page's figures must not be drawn over it.
    pending = window.setTimeout(() => {
      if (context.isCurrent()) draw()
    }, 150)
  }
  window.addEventListener('resize', onResize)
}

function charts(project: ProjectDetail, analytics: Analytics, usageCard: HTMLElement): HTMLElement[] {
  const { totals } = analytics
  const stats = h(
    'dl',
    { className: 'stats', testId: 'totals' },
    ...(
      [
        ['Payloads', totals.total],
        ['Signed', totals.signed],
        ['Rejected', totals.rejected],
        ['Expired', totals.expired],
        ['Pending', totals.pending],
      ] as const
    ).map(([label, value]) => h('div', {}, h('dt', {}, label), h('dd', {}, value.toLocaleString()))),
  )
  const legend = h(
    'ul',
    { className: 'legend', attrs: { 'aria-label': 'Legend' } },
    ...DAILY_SERIES.map((series) =>
      h('li', {}, h('span', { className: `swatch swatch-${series.key}`, attrs: { 'aria-hidden': 'true' } }), series.label),
    ),
  )
  const rate = card(
    'Signing rate',
    'signing-rate',
    h(
      'div',
      { className: 'rate' },
      rateRing(totals.signingRate),
      h(
        'p',
        { className: 'muted' },
        `${totals.signed} signed of ${totals.signed + totals.rejected + totals.expired} resolved (rejected and expired count against it).`,
      ),
    ),
  )
  const wallets = card(
    'Wallets',
    'wallets',
    analytics.walletBreakdown.length > 0
      ? h('div', { className: 'chart-box', testId: 'wallet-chart' })
      : h('p', { className: 'muted' }, 'No payload was signed in this period.'),
  )
  return [
    stats,
    h('div', { className: 'grid' }, usageCard, rate),
    card('Payloads per day', 'daily', legend, h('div', { className: 'chart-box', testId: 'daily-chart' })),
    wallets,
    h('p', {}, link(paths.project(project.id, 'payloads'), 'See every payload')),
  ]
}

function firstPayloadHelp(project: ProjectDetail): HTMLElement {
  return emptyState(
    'h3',
    'No payloads yet',
    h(
      'p',
      {},
      'Create your first payload from your server with an API key of this project (',
      link(paths.project(project.id, 'keys'), 'create one'),
      ' if you no longer have the key you were shown). Then open the signingUrl of the answer to sign it with a wallet.',
    ),
    firstPayloadCurl(location.origin),
    h('p', { className: 'muted' }, 'This page fills in as payloads are signed, rejected or expire.'),
  )
}

function card(title: string, testId: string, ...children: (HTMLElement | null)[]): HTMLElement {
  return h('section', { className: 'card', testId }, h('h3', {}, title), ...children)
}

function widthOf(element: HTMLElement): number {
  return Math.max(240, Math.floor(element.clientWidth))
}

function usageLabel(project: ProjectDetail): string {
  return `${project.usage.used} of ${project.usage.limit} payloads used in ${monthName(project.usage.month)}`
}

function usedPercent(project: ProjectDetail): number {
  const { used, limit } = project.usage
  return limit > 0 ? Math.min(100, Math.floor((100 * used) / limit)) : 100
}

function monthName(month: string): string {
  return new Date(`${month}-01T00:00:00Z`).toLocaleDateString(undefined, { month: 'long', year: 'numeric', timeZone: 'UTC' })
}
