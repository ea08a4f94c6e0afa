// A project's payloads: a paginated list with status and type filters (kept in the URL), and one payload with
// every field and the webhook deliveries of its events.
import { PAYLOAD_STATUSES, PAYLOAD_TYPES } from '../../../features/payloads/model.js'
import { ApiError } from '../../shared/api-client.js'
import { api, type PayloadDelivery, type PayloadDetail } from '../api.js'
import { type PageContext, projectFrame } from '../page.js'
import { paths } from '../router.js'
import {
  badge,
  type Child,
  emptyState,
  errorMessage,
  field,
  firstPayloadCurl,
  formatTime,
  h,
  link,
  replaceChildren,
  select,
} from '../ui.js'

const PAGE_SIZE = 20

const STATUS_BADGE: Record<string, string> = { pending: 'warn', signed: 'ok', rejected: 'bad', expired: 'muted' }

const statusBadge = (status: string) => badge(status, STATUS_BADGE[status] ?? 'muted')

export async function payloadsPage(view: HTMLElement, context: PageContext, projectId: string): Promise<void> {
  const query = new URLSearchParams(location.search)
  const status = oneOf(query.get('status'), PAYLOAD_STATUSES)
  const type = oneOf(query.get('type'), PAYLOAD_TYPES)
  const offset = Math.max(0, Number.parseInt(query.get('offset') ?? '0', 10) || 0)
  // One more than a page: whether it comes back says if there is a next page.
  const [project, found] = await Promise.all([
    api.project(projectId),
    api.payloads(projectId, { limit: PAGE_SIZE + 1, offset, status, type }),
  ])
  if (!context.isCurrent()) return
  const payloads = found.slice(0, PAGE_SIZE)

  const urlWith = (changes: { status?: string; type?: string; offset?: number }) => {
    const next = new URLSearchParams()
    const merged = { status, type, offset: 0, ...changes }
    if (merged.status) next.set('status', merged.status)
    if (merged.type) next.set('type', merged.type)
    if (merged.offset > 0) next.set('offset', String(merged.offset))
    const search = next.toString()
    return `${paths.project(projectId, 'payloads')}${search ? `?${search}` : ''}`
  }
  const statusSelect = select(
    'status',
    [['', 'Any status'], ...PAYLOAD_STATUSES.map((value): [string, string] => [value, value])],
    status ?? '',
  )
  const typeSelect = select('type', [['', 'Any type'], ...PAYLOAD_TYPES.map((value): [string, string] => [value, value])], type ?? '')
  statusSelect.addEventListener('change', () => context.navigate(urlWith({ status: statusSelect.value || undefined })))
  typeSelect.addEventListener('change', () => context.navigate(urlWith({ type: typeSelect.value || undefined })))
  const filters = h(
    'div',
    { className: 'filters', testId: 'payload-filters', attrs: { role: 'search' } },
    field('Status', statusSelect),
    field('Type', typeSelect),
  )

  let content: Child
  if (payloads.length === 0 && offset === 0 && !status && !type) {
    content = emptyState(
      'No payloads yet',
      h('p', {}, 'Payloads appear here as soon as your server creates them. Try it with an API key of this project:'),
      firstPayloadCurl(location.origin),
    )
  } else if (payloads.length === 0) {
    content = emptyState(
      'Nothing here',
      h('p', {}, 'No payload matches these filters on this page.'),
      link(urlWith({ status: undefined, type: undefined }), 'Clear the filters'),
    )
  } else {
    content = h(
      'table',
      { className: 'table', testId: 'payloads' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ...['Created', 'Type', 'Status', 'Wallet', 'Signer', 'Payload'].map((title) => h('th', { attrs: { scope: 'col' } }, title)),
        ),
      ),
      h(
        'tbody',
        {},
        ...payloads.map((payload) =>
          h(
            'tr',
            {},
            h('td', { className: 'when', attrs: { 'data-label': 'Created' } }, formatTime(payload.createdAt)),
            h('td', { attrs: { 'data-label': 'Type' } }, payload.type),
            h('td', { attrs: { 'data-label': 'Status' } }, statusBadge(payload.status)),
            h('td', { attrs: { 'data-label': 'Wallet' } }, payload.walletAdapter ?? '—'),
            h('td', { attrs: { 'data-label': 'Signer' } }, payload.signerAddress ? h('code', {}, payload.signerAddress) : '—'),
            h(
              'td',
              { attrs: { 'data-label': 'Payload' } },
              link(paths.payload(projectId, payload.uuid), h('code', {}, payload.uuid.slice(0, 8)), {
                attrs: { 'aria-label': `Payload ${payload.uuid}` },
              }),
            ),
          ),
        ),
      ),
    )
  }

  const pager = h(
    'nav',
    { className: 'pager', attrs: { 'aria-label': 'Pages' } },
    offset > 0 ? link(urlWith({ offset: Math.max(0, offset - PAGE_SIZE) }), '← Newer') : null,
    payloads.length > 0 ? h('span', { className: 'muted' }, `${offset + 1}–${offset + payloads.length}`) : null,
    found.length > PAGE_SIZE ? link(urlWith({ offset: offset + PAGE_SIZE }), 'Older →') : null,
  )
  replaceChildren(view, ...projectFrame(project, 'payloads', filters, content, pager))
}

export async function payloadPage(view: HTMLElement, context: PageContext, projectId: string, uuid: string): Promise<void> {
  const [project, payload] = await Promise.all([api.project(projectId), api.payload(projectId, uuid)])
  if (!context.isCurrent()) return
  const deliveries = h('div', { testId: 'payload-deliveries' }, h('p', { className: 'loading' }, 'Loading deliveries…'))
  replaceChildren(
    view,
    ...projectFrame(
      project,
      'payloads',
      h('p', {}, link(paths.project(projectId, 'payloads'), '← All payloads')),
      h('h2', {}, 'Payload ', h('code', { className: 'break' }, payload.uuid)),
      fields(payload),
      h('h2', {}, 'Webhook deliveries'),
      deliveries,
    ),
  )
  try {
    const found = await api.payloadDeliveries(projectId, uuid)
    if (context.isCurrent()) replaceChildren(deliveries, deliveryTable(projectId, found))
  } catch (error) {
    if (!context.isCurrent()) return
    if (error instanceof ApiError && error.status === 403) {
      replaceChildren(
        deliveries,
        h(
          'p',
          { className: 'muted' },
          'Webhooks need the Pro plan: on Free, payload events are not delivered. Poll the payload or stream its status instead.',
        ),
      )
    } else replaceChildren(deliveries, errorMessage(error))
  }
}

function fields(payload: PayloadDetail): HTMLElement {
  const rows: [string, Child][] = [
    ['UUID', h('code', {}, payload.uuid)],
    ['Type', payload.type],
    ['Status', statusBadge(payload.status)],
    ['Created', formatTime(payload.createdAt)],
    ['Expires', formatTime(payload.expiresAt)],
    ['Resolved', formatTime(payload.resolvedAt)],
    ['Wallet', payload.walletAdapter ?? '—'],
    ['Signer address', code(payload.signerAddress)],
    ['Transaction hash', code(payload.txHash)],
  ]
  if ('txBlob' in payload) rows.push(['Signed blob', code(payload.txBlob ?? null)])
  if ('publicKey' in payload) rows.push(['Public key', code(payload.publicKey ?? null)], ['Signature', code(payload.signature ?? null)])
  if (payload.submission) {
    rows.push(
      ['Submit result', code(payload.submission.engineResult)],
      ['Validated result', code(payload.submission.validatedResult)],
      ['Ledger index', payload.submission.ledgerIndex === null ? '—' : String(payload.submission.ledgerIndex)],
    )
  }
  rows.push(
    ['Transaction', payload.transaction ? h('pre', {}, h('code', {}, JSON.stringify(payload.transaction, null, 2))) : '—'],
    ['Message', payload.message === null ? '—' : h('pre', {}, payload.message)],
    ['Custom instructions', payload.customInstructions ?? '—'],
    ['Return URL', code(payload.returnUrl)],
  )
  return h(
    'dl',
    { className: 'fields', testId: 'payload-fields' },
    ...rows.map(([label, value]) => h('div', {}, h('dt', {}, label), h('dd', {}, value))),
  )
}

function deliveryTable(projectId: string, deliveries: PayloadDelivery[]): HTMLElement {
  if (deliveries.length === 0)
    return h(
      'p',
      { className: 'muted' },
      'No webhook delivery for this payload: none was subscribed when it resolved, or it is still pending.',
    )
  return h(
    'table',
    { className: 'table' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...['Event', 'State', 'Attempts', 'Last answer', 'Created', 'Webhook'].map((title) => h('th', { attrs: { scope: 'col' } }, title)),
      ),
    ),
    h(
      'tbody',
      {},
      ...deliveries.map((delivery) =>
        h(
          'tr',
          {},
          h('td', { attrs: { 'data-label': 'Event' } }, delivery.event),
          h('td', { attrs: { 'data-label': 'State' } }, deliveryBadge(delivery.state)),
          h('td', { attrs: { 'data-label': 'Attempts' } }, String(delivery.attempts)),
          h('td', { attrs: { 'data-label': 'Last answer' } }, lastAnswer(delivery)),
          h('td', { className: 'when', attrs: { 'data-label': 'Created' } }, formatTime(delivery.createdAt)),
          h('td', { attrs: { 'data-label': 'Webhook' } }, link(paths.project(projectId, 'webhooks'), h('code', {}, delivery.webhookId))),
        ),
      ),
    ),
  )
}

const DELIVERY_BADGE: Record<string, string> = { pending: 'warn', sending: 'warn', succeeded: 'ok', failed: 'bad', cancelled: 'muted' }

export const deliveryBadge = (state: string) => badge(state, DELIVERY_BADGE[state] ?? 'muted')

export function lastAnswer(delivery: { lastStatusCode: number | null; lastError: string | null }): string {
  if (delivery.lastError) return delivery.lastStatusCode === null ? delivery.lastError : `${delivery.lastStatusCode}: ${delivery.lastError}`
  return delivery.lastStatusCode === null ? '—' : String(delivery.lastStatusCode)
}

function code(value: string | null): Child {
  return value === null ? '—' : h('code', { className: 'break' }, value)
}

function oneOf<T extends string>(value: string | null, allowed: readonly T[]): T | undefined {
  return allowed.includes(value as T) ? (value as T) : undefined
}
