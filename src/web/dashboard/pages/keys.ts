// A project's API keys: create one with a name (its full value shown once), list them by prefix with their last
// use, and revoke one after a confirmation step.
import { MAX_NAME_CHARS } from '../../../features/projects/names.js'
import { type ApiKeySummary, api, type CreatedApiKey, type ProjectDetail } from '../api.js'
import { type PageContext, projectFrame } from '../page.js'
import {
  badge,
  button,
  confirmInPlace,
  emptyState,
  field,
  formatTime,
  h,
  input,
  onSubmit,
  replaceChildren,
  secretOnce,
  submitButton,
  visuallyHidden,
} from '../ui.js'

export async function keysPage(view: HTMLElement, context: PageContext, projectId: string): Promise<void> {
  const [project, keys] = await Promise.all([api.project(projectId), api.keys(projectId)])
  if (!context.isCurrent()) return
  draw(view, context, project, keys)
}

function draw(view: HTMLElement, context: PageContext, project: ProjectDetail, keys: ApiKeySummary[], created?: CreatedApiKey): void {
  const refresh = async (newKey?: CreatedApiKey) => {
    const fresh = await api.keys(project.id)
    if (context.isCurrent()) draw(view, context, project, fresh, newKey)
  }

  const name = input({ name: 'name', placeholder: 'Production server', required: true, maxLength: MAX_NAME_CHARS })
  const form = h(
    'form',
    { className: 'inline-form', testId: 'create-key' },
    field('Key name', name, 'Say where the key will live, to know what breaks when you revoke it.'),
    submitButton('Create key'),
  )
  onSubmit(form, async () => refresh(await api.createKey(project.id, name.value)))

  const active = keys.filter((key) => key.revokedAt === null)
  const rows = keys.map((key) => {
    const actions = h('td', { className: 'actions' })
    if (key.revokedAt === null) {
      const revoke = button('Revoke', () =>
        confirmInPlace(
          revoke,
          `Revoke "${key.name}" (${key.prefix}…)? Requests with it will get 401 within seconds.${active.length === 1 ? ' It is the last active key of this project.' : ''}`,
          'Revoke key',
          async () => {
            await api.revokeKey(project.id, key.id)
            await refresh()
          },
        ),
      )
      revoke.classList.add('danger')
      revoke.setAttribute('aria-label', `Revoke ${key.name}`)
      actions.append(revoke)
    }
    return h(
      'tr',
      { testId: `key-${key.id}` },
      h('td', { attrs: { 'data-label': 'Name' } }, key.name),
      h('td', { attrs: { 'data-label': 'Key' } }, h('code', {}, `${key.prefix}…`)),
      h('td', { className: 'when', attrs: { 'data-label': 'Created' } }, formatTime(key.createdAt)),
      h('td', { className: 'when', attrs: { 'data-label': 'Last used' } }, key.lastUsedAt === null ? 'Never' : formatTime(key.lastUsedAt)),
      h(
        'td',
        { attrs: { 'data-label': 'Status' } },
        key.revokedAt === null ? badge('Active', 'ok') : badge(`Revoked ${formatTime(key.revokedAt)}`, 'muted'),
      ),
      actions,
    )
  })

  replaceChildren(
    view,
    ...projectFrame(
      project,
      'keys',
      created ? secretOnce(`New API key "${created.name}"`, created.apiKey, 'new-key') : null,
      h('h2', {}, 'Create a key'),
      form,
      h('h2', {}, 'Keys'),
      keys.length === 0
        ? emptyState('h3', 'No keys', h('p', {}, 'Create a key above; your server sends it as `Authorization: Bearer <key>`.'))
        : h(
            'table',
            { className: 'table', testId: 'keys' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ...['Name', 'Key', 'Created', 'Last used', 'Status'].map((title) => h('th', { attrs: { scope: 'col' } }, title)),
                h('th', { attrs: { scope: 'col' } }, visuallyHidden('Actions')),
              ),
            ),
            h('tbody', {}, ...rows),
          ),
    ),
  )
}
