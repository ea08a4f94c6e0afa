// A project's payloads: a paginated list with status and type filters (kept in the URL), and one payload with
// every field and the webhook deliveries of its events.
import { PAYLOAD_STATUSES, PAYLOAD_TYPES } from '../../../features/payloads/model.js'
import { ApiError } from '../../shared/api-client.js'
import { walletName } from '../../shared/wallet-names.js'
import { api, type PayloadDelivery, type PayloadDetail, type PayloadSummary } from '../api.js'
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
  input,
  link,
  replaceChildren,
  scrollingPre,
  select,
  submitButton,
} from '../ui.js'

const PAGE_SIZE = 20

const STATUS_BADGE: Record<string, string> = { pending: 'warn', signed: 'ok', rejected: 'bad', expired: 'muted' }

const statusBadge = (status: string) => badge(status, STATUS_BADGE[status] ?? 'muted')

export async function payloadsPage(view: HTMLElement, context: PageContext, projectId: string): Promise<void> {
  const query = new URLSearchParams(location.search)
  const status = oneOf(query.get('status'), PAYLOAD_STATUSES)
  const type = oneOf(query.get('type'), PAYLOAD_TYPES)
  const offset = Math.max(0, Number.parseInt(query.get('offset') ?? '0', 10) || 0)
  const q = (query.get('q') ?? '').trim().slice(0, 200) || undefined
  const [project, { payloads, hasMore }] = await Promise.all([
    api.project(projectId),
    api.payloads(projectId, { limit: PAGE_SIZE, offset, status, type, q }),
  ])
  if (!context.isCurrent()) return

  const urlWith = (changes: { status?: string; type?: string; q?: string; offset?: number }) => {
    const next = new URLSearchParams()
    const merged = { status, type, q, offset: 0, ...changes }
    if (merged.q) next.set('q', merged.q)
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
  const searchBox = input({ name: 'q', type: 'search', placeholder: 'Uuid (or its start), signer address or externalId' })
  searchBox.value = q ?? ''
  const searchForm = h(
    'form',
    { className: 'search-form', attrs: { role: 'search', 'aria-label': 'Payloads' } },
    field('Search', searchBox),
    submitButton('Search'),
  )
  searchForm.addEventListener('submit', (event) => {
    event.preventDefault()
    context.navigate(urlWith({ q: searchBox.value.trim() || undefined }))
  })
  const filters = h(
    'div',
    { className: 'filters', testId: 'payload-filters' },
    searchForm,
    field('Status', statusSelect),
    field('Type', typeSelect),
  )

  let content: Child
  if (payloads.length === 0 && offset === 0 && !status && !type && !q) {
    content = emptyState(
      'h2',
      'No payloads yet',
      h('p', {}, 'Payloads appear here as soon as your server creates them. Try it with an API key of this project:'),
      firstPayloadCurl(location.origin),
    )
  } else if (payloads.length === 0) {
    content = emptyState(
      'h2',
      'Nothing here',
      h(
        'p',
        {},
        q
          ? `No payload matches “${q}”${status || type ? ' with these filters' : ''}. Search by a payload's uuid (or its first characters), the signer's address or your externalId.`
          : 'No payload matches these filters on this page.',
      ),
      link(urlWith({ status: undefined, type: undefined, q: undefined }), 'Clear the search and filters'),
    )
  } else {
    content = h(
      'table',
      { className: 'table payload-table', testId: 'payloads' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ...['Payload', 'External id', 'Status', 'Type', 'Wallet', 'Signer', 'Created'].map((title) =>
            h('th', { attrs: { scope: 'col' } }, title),
          ),
        ),
      ),
      h('tbody', {}, ...payloads.map((payload) => payloadRow(context, projectId, payload))),
    )
  }

  const pager = h(
    'nav',
    { className: 'pager', attrs: { 'aria-label': 'Pages' } },
    offset > 0 ? link(urlWith({ offset: Math.max(0, offset - PAGE_SIZE) }), '← Newer') : null,
    payloads.length > 0 ? h('span', { className: 'muted' }, `${offset + 1}–${offset + payloads.length}`) : null,
    hasMore ? link(urlWith({ offset: offset + PAGE_SIZE }), 'Older →') : null,
  )
  replaceChildren(view, ...projectFrame(project, 'payloads', filters, content, pager))
}

/**
 * One payload as a row that is a link as a whole: a click anywhere on it opens the payload (a click with a modifier
 * key, or on the uuid link itself, keeps the browser's own behaviour). The uuid link is what keyboards and screen
 * readers use. On a phone the row is two short lines (see the CSS), not a card of seven, and the externalId and
 * the signer a muted line each when there are.
 */
function payloadRow(context: PageContext, projectId: string, payload: PayloadSummary): HTMLElement {
  const href = paths.payload(projectId, payload.uuid)
  const row = h(
    'tr',
    { className: 'row-link' },
    h(
      'td',
      { className: 'cell-uuid', attrs: { 'data-label': 'Payload' } },
      link(href, h('code', {}, payload.uuid.slice(0, 8)), { attrs: { 'aria-label': `Payload ${payload.uuid}` } }),
    ),
    h(
      'td',
      { className: payload.externalId ? 'cell-external' : 'cell-external none', attrs: { 'data-label': 'External id' } },
      payload.externalId ? h('code', { className: 'break' }, payload.externalId) : '—',
    ),
    h('td', { className: 'cell-status', attrs: { 'data-label': 'Status' } }, statusBadge(payload.status)),
    h('td', { className: 'cell-type', attrs: { 'data-label': 'Type' } }, payload.type),
    h(
      'td',
      { className: 'cell-wallet', attrs: { 'data-label': 'Wallet' } },
      payload.walletAdapter ? walletName(payload.walletAdapter) : '—',
    ),
    h(
      'td',
      { className: payload.signerAddress ? 'cell-signer' : 'cell-signer none', attrs: { 'data-label': 'Signer' } },
      payload.signerAddress ? h('code', {}, payload.signerAddress) : '—',
    ),
    h('td', { className: 'when cell-when', attrs: { 'data-label': 'Created' } }, formatTime(payload.createdAt)),
  )
  row.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
    // Selecting text (a signer address to copy) is not a click on the row.
    if (window.getSelection()?.toString()) return
    if ((event.target as Element).closest('a')) return
    context.navigate(href)
  })
  return row
}

export async function payloadPage(view: HTMLElement, context: PageContext, projectId: string, uuid: string): Promise<void> {
  const [project, payload] = await Promise.all([api.project(projectId), api.payload(projectId, uuid).catch(unlessNotFound)])
  if (!context.isCurrent()) return
  // Found or not, within the project's frame: its name, its tabs, and the way back to its payloads.
  const show = (...children: Child[]) =>
    replaceChildren(
      view,
      ...projectFrame(project, 'payloads', h('p', {}, link(paths.project(projectId, 'payloads'), '← All payloads')), ...children),
    )
  if (payload === null) {
    show(
      h('h2', { testId: 'payload-not-found' }, 'Payload not found'),
      h(
        'p',
        {},
        'This project has no payload ',
        h('code', { className: 'break' }, uuid),
        '. Search its payloads by uuid, signer or externalId.',
      ),
    )
    return
  }
  const deliveries = h('div', { testId: 'payload-deliveries' }, h('p', { className: 'loading' }, 'Loading deliveries…'))
  show(
    h('h2', {}, 'Payload ', h('code', { className: 'break' }, payload.uuid)),
    fields(payload),
    h('h2', {}, 'Webhook deliveries'),
    deliveries,
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
    ['Wallet', payload.walletAdapter ? walletName(payload.walletAdapter) : '—'],
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
    ['Transaction', payload.transaction ? scrollingPre('Transaction JSON', JSON.stringify(payload.transaction, null, 2)) : '—'],
    ['Message', payload.message === null ? '—' : scrollingPre('Message', payload.message)],
    ['Custom instructions', payload.customInstructions ?? '—'],
    ['Return URL', code(payload.returnUrl)],
    ['External id', code(payload.externalId)],
    ['Metadata', payload.metadata ? scrollingPre('Metadata JSON', JSON.stringify(payload.metadata, null, 2)) : '—'],
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

/** No such payload (404: an unknown uuid or another project's; 422: not a uuid at all) as null; any other failure stays one. */
function unlessNotFound(error: unknown): null {
  if (error instanceof ApiError && (error.status === 404 || error.status === 422)) return null
  throw error
}

function code(value: string | null): Child {
  return value === null ? '—' : h('code', { className: 'break' }, value)
}

function oneOf<T extends string>(value: string | null, allowed: readonly T[]): T | undefined {
  return allowed.includes(value as T) ? (value as T) : undefined
}
