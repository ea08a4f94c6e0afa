// A Pro project's webhooks: create one (its signing secret shown once), list, delete, read its delivery log, send a
// test event and retry a delivery. On Free the page says that webhooks need Pro.
import { PAYLOAD_EVENTS, RESOLUTION_EVENTS } from '../../../features/payloads/model.js'
import { ApiError } from '../../shared/api-client.js'
import { api, type CreatedWebhook, type DeliveryView, type ProjectDetail, type WebhookView } from '../api.js'
import { type PageContext, projectFrame } from '../page.js'
import { paths } from '../router.js'
import {
  badge,
  button,
  confirmInPlace,
  emptyState,
  errorMessage,
  field,
  formatTime,
  h,
  input,
  link,
  onSubmit,
  replaceChildren,
  scrollingPre,
  secretOnce,
  submitButton,
  visuallyHidden,
} from '../ui.js'
import { deliveryBadge, lastAnswer } from './payloads.js'

export async function webhooksPage(view: HTMLElement, context: PageContext, projectId: string): Promise<void> {
  const project = await api.project(projectId)
  if (!context.isCurrent()) return
  if (project.plan !== 'pro') {
    replaceChildren(view, ...projectFrame(project, 'webhooks', needsPro(project)))
    return
  }
  let webhooks: WebhookView[]
  try {
    webhooks = await api.webhooks(projectId)
  } catch (error) {
    // The plan can change between the two requests.
    if (error instanceof ApiError && error.status === 403) {
      if (context.isCurrent()) replaceChildren(view, ...projectFrame(project, 'webhooks', needsPro(project)))
      return
    }
    throw error
  }
  if (!context.isCurrent()) return
  draw(view, context, project, webhooks)
}

function needsPro(project: ProjectDetail): HTMLElement {
  return emptyState(
    'h2',
    'Webhooks need the Pro plan',
    h('p', {}, 'On Free, your server learns the outcome of a payload by polling it or by streaming its status.'),
    h(
      'p',
      {},
      'With Pro, Countersign posts a signed event to your server as soon as a payload is signed, rejected or expires. The operator of this service moves a project to Pro with:',
    ),
    scrollingPre('Command to move this project to Pro', `countersign project set-plan ${project.id} pro`),
  )
}

function draw(view: HTMLElement, context: PageContext, project: ProjectDetail, webhooks: WebhookView[], created?: CreatedWebhook): void {
  const refresh = async (newWebhook?: CreatedWebhook) => {
    const fresh = await api.webhooks(project.id)
    if (context.isCurrent()) draw(view, context, project, fresh, newWebhook)
  }

  const url = input({ name: 'url', type: 'url', placeholder: 'https://example.com/countersign-events', required: true })
  const events = PAYLOAD_EVENTS.map((event) => {
    const checkbox = h('input', { attrs: { type: 'checkbox', name: 'events', value: event } })
    // payload.finalized is offered but not preselected, as the API does when a webhook names no events.
    checkbox.checked = (RESOLUTION_EVENTS as readonly string[]).includes(event)
    return { event, checkbox }
  })
  const form = h(
    'form',
    { className: 'stack-form', testId: 'create-webhook' },
    field('Endpoint URL', url, 'Your server receives a POST with the event, signed with the secret shown after creation.'),
    h(
      'fieldset',
      { className: 'events' },
      h('legend', {}, 'Events'),
      ...events.map(({ event, checkbox }) => h('label', { className: 'check' }, checkbox, event)),
    ),
    submitButton('Add webhook'),
  )
  onSubmit(form, async () => {
    const chosen = events.filter(({ checkbox }) => checkbox.checked).map(({ event }) => event)
    await refresh(await api.createWebhook(project.id, url.value, chosen))
  })

  replaceChildren(
    view,
    ...projectFrame(
      project,
      'webhooks',
      created ? secretOnce(`Signing secret of ${created.url}`, created.secret, 'new-webhook-secret') : null,
      h('h2', {}, 'Webhooks'),
      webhooks.length === 0
        ? emptyState(
            'h3',
            'No webhooks yet',
            h('p', {}, 'Add the URL of an endpoint on your server below. Send it a test event to check that it answers 2xx.'),
          )
        : h(
            'div',
            { className: 'webhook-list', testId: 'webhooks' },
            ...webhooks.map((webhook) => webhookCard(project.id, webhook, () => refresh())),
          ),
      h('h2', {}, 'Add a webhook'),
      form,
    ),
  )
}

function webhookCard(projectId: string, webhook: WebhookView, refresh: () => Promise<void>): HTMLElement {
  const log = h('div', { className: 'delivery-log' })
  const status = h('p', { className: 'muted', attrs: { role: 'status' } })
  const showLog = async () => {
    replaceChildren(log, h('p', { className: 'loading' }, 'Loading deliveries…'))
    try {
      replaceChildren(log, deliveryLog(projectId, webhook.id, await api.deliveries(projectId, webhook.id), showLog))
    } catch (error) {
      replaceChildren(log, errorMessage(error))
    }
  }
  const test = button('Send test event', async () => {
    test.disabled = true
    try {
      await api.sendTest(projectId, webhook.id)
      status.textContent = 'Test event queued: its outcome appears in the delivery log.'
      await showLog()
    } catch (error) {
      replaceChildren(status, errorMessage(error))
    } finally {
      test.disabled = false
    }
  })
  const remove = button('Delete', () =>
    confirmInPlace(
      remove,
      `Delete the webhook for ${webhook.url}? Its deliveries still waiting are cancelled.`,
      'Delete webhook',
      async () => {
        await api.deleteWebhook(projectId, webhook.id)
        await refresh()
      },
    ),
  )
  remove.classList.add('danger')
  const enable = button('Enable', async () => {
    enable.disabled = true
    try {
      await api.enableWebhook(projectId, webhook.id)
      await refresh()
    } catch (error) {
      replaceChildren(status, errorMessage(error))
      enable.disabled = false
    }
  })
  const disabled = webhook.disabledAt
    ? h(
        'p',
        {},
        badge('Disabled', 'bad'),
        ` since ${formatTime(webhook.disabledAt)}: ${webhook.disabledReason ?? 'no reason recorded'}. ` +
          'Enable it to resume deliveries, then replay what failed (POST /api/v1/webhooks/{id}/replay).',
      )
    : null
  const card = h(
    'section',
    { className: 'card webhook', testId: `webhook-${webhook.id}` },
    h('h3', { className: 'break' }, webhook.url),
    h('p', { className: 'muted' }, `${webhook.events.join(', ')} · added ${formatTime(webhook.createdAt)} · `, h('code', {}, webhook.id)),
    disabled,
    h('div', { className: 'actions' }, webhook.disabledAt ? enable : null, test, remove),
    status,
    h('h4', { className: 'log-heading' }, 'Recent deliveries'),
    log,
  )
  // The log is what the page is for once a webhook exists: shown at once, not behind a button.
  void showLog()
  return card
}

function deliveryLog(projectId: string, webhookId: string, deliveries: DeliveryView[], reload: () => Promise<void>): HTMLElement {
  const refresh = button('Refresh', () => reload(), { className: 'button secondary' })
  if (deliveries.length === 0) return h('div', {}, h('p', { className: 'muted' }, 'No deliveries yet.'), refresh)
  return h(
    'div',
    {},
    h(
      'table',
      { className: 'table', testId: 'deliveries' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ...['Event', 'State', 'Attempts', 'Last answer', 'Created', 'Next attempt'].map((title) =>
            h('th', { attrs: { scope: 'col' } }, title),
          ),
          h('th', { attrs: { scope: 'col' } }, visuallyHidden('Actions')),
        ),
      ),
      h(
        'tbody',
        {},
        ...deliveries.map((delivery) => {
          const actions = h('td', { className: 'actions' })
          // Only a failure is worth sending again: a success was received, a delivery on its way will be tried anyway.
          if (delivery.state === 'failed') {
            const retry = button('Retry', async () => {
              retry.disabled = true
              try {
                await api.retryDelivery(projectId, webhookId, delivery.id)
                await reload()
              } catch (error) {
                retry.disabled = false
                actions.append(errorMessage(error))
              }
            })
            retry.classList.add('secondary')
            retry.setAttribute('aria-label', `Retry delivery ${delivery.id}`)
            actions.append(retry)
          }
          return h(
            'tr',
            {},
            h(
              'td',
              { attrs: { 'data-label': 'Event' } },
              delivery.event,
              delivery.payloadUuid
                ? h(
                    'small',
                    { className: 'block' },
                    link(paths.payload(projectId, delivery.payloadUuid), h('code', {}, delivery.payloadUuid.slice(0, 8)), {
                      attrs: { 'aria-label': `Payload ${delivery.payloadUuid}` },
                    }),
                  )
                : null,
            ),
            h('td', { attrs: { 'data-label': 'State' } }, deliveryBadge(delivery.state)),
            h('td', { attrs: { 'data-label': 'Attempts' } }, String(delivery.attempts)),
            h('td', { attrs: { 'data-label': 'Last answer' } }, lastAnswer(delivery)),
            h('td', { className: 'when', attrs: { 'data-label': 'Created' } }, formatTime(delivery.createdAt)),
            h('td', { className: 'when', attrs: { 'data-label': 'Next attempt' } }, formatTime(delivery.nextAttemptAt)),
            actions,
          )
        }),
      ),
    ),
    refresh,
  )
}
