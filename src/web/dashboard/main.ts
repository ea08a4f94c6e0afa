// The dashboard's entry: finds who is signed in, then renders the page of the current path into the shell's <main>.
// Without a session it shows how to sign in on this server.
import { ApiError } from '../shared/api-client.js'
import { type Account, api } from './api.js'
import type { Page } from './page.js'
import { keysPage } from './pages/keys.js'
import { overviewPage } from './pages/overview.js'
import { payloadPage, payloadsPage } from './pages/payloads.js'
import { projectsPage } from './pages/projects.js'
import { settingsPage } from './pages/settings.js'
import { signInPage } from './pages/sign-in.js'
import { webhooksPage } from './pages/webhooks.js'
import { type ProjectPage, parseRoute, paths, type Route, startRouter } from './router.js'
import { errorMessage, h, link, loading, replaceChildren } from './ui.js'

const root = document.getElementById('app') as HTMLElement

function pageFor(route: Route): Page {
  switch (route.page) {
    case 'projects':
      return projectsPage
    case 'overview':
      return (view, context) => overviewPage(view, context, route.projectId)
    case 'keys':
      return (view, context) => keysPage(view, context, route.projectId)
    case 'payloads':
      return (view, context) => payloadsPage(view, context, route.projectId)
    case 'payload':
      return (view, context) => payloadPage(view, context, route.projectId, route.uuid)
    case 'webhooks':
      return (view, context) => webhooksPage(view, context, route.projectId)
    case 'settings':
      return (view, context) => settingsPage(view, context, route.projectId)
    case 'not-found':
      return async (view) =>
        replaceChildren(view, h('h1', {}, 'Page not found'), h('p', {}, link(paths.projects(), 'Back to your projects')))
  }
}

function header(account: Account, switcher: HTMLElement): HTMLElement {
  // A real form post: the browser adds the Origin header the server checks, and follows the redirect back here.
  const signOut = h(
    'form',
    { className: 'sign-out', attrs: { method: 'post', action: '/auth/logout' } },
    h('button', { className: 'button secondary', attrs: { type: 'submit' } }, 'Sign out'),
  )
  return h(
    'header',
    { className: 'top-bar' },
    // The same width as the page below, so that the wordmark lines up with the content.
    h(
      'div',
      { className: 'top-bar-inner' },
      link(paths.projects(), 'Countersign', { className: 'brand' }),
      switcher,
      h('span', { className: 'account', testId: 'account' }, account.email ?? account.name ?? 'Signed in'),
      signOut,
    ),
  )
}

/** The section a project page belongs to: switching projects keeps it (the payloads of another project, and so on). */
function sectionOf(route: Route): ProjectPage {
  if (route.page === 'payload') return 'payloads'
  if (route.page === 'keys' || route.page === 'payloads' || route.page === 'webhooks' || route.page === 'settings') return route.page
  return 'overview'
}

/**
 * The project switcher in the header: the current project's name, opening a menu of the account's projects (each
 * at the same section) and the list of all projects. Outside a project it names none.
 */
function projectSwitcher(): { element: HTMLElement; update(route: Route): Promise<void> } {
  const label = h('span', { className: 'switcher-label' }, 'Projects')
  const menu = h('ul', { className: 'switcher-menu', testId: 'switcher-menu' })
  const element = h(
    'details',
    { className: 'switcher', testId: 'project-switcher' },
    // The visible name is the accessible name too; the hidden words say what the control does.
    h('summary', {}, h('span', { className: 'visually-hidden' }, 'Switch project, now: '), label),
    menu,
  )
  // A choice closes the menu; so does a click elsewhere.
  menu.addEventListener('click', () => element.removeAttribute('open'))
  document.addEventListener('click', (event) => {
    if (!element.contains(event.target as Node)) element.removeAttribute('open')
  })
  return {
    element,
    async update(route) {
      const projects = await api.projects()
      const currentId = 'projectId' in route ? route.projectId : undefined
      const current = projects.find((project) => project.id === currentId)
      label.textContent = current?.name ?? 'Projects'
      replaceChildren(
        menu,
        ...projects.map((project) =>
          h(
            'li',
            {},
            link(
              paths.project(project.id, sectionOf(route)),
              project.name,
              project === current ? { attrs: { 'aria-current': 'true' } } : {},
            ),
          ),
        ),
        h('li', { className: 'switcher-all' }, link(paths.projects(), 'All projects')),
      )
    },
  }
}

async function start(): Promise<void> {
  let account: Account
  try {
    account = (await api.session()).account
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      signInPage(root, (await api.signInMethods()).oidc)
      return
    }
    replaceChildren(root, errorMessage(error))
    return
  }

  const view = h('main', { className: 'view', attrs: { id: 'view', tabindex: '-1' } })
  const switcher = projectSwitcher()
  replaceChildren(root, header(account, switcher.element), view)
  let generation = 0
  const render = () => {
    generation += 1
    const current = generation
    const route = parseRoute(location.pathname)
    replaceChildren(view, loading())
    // A failure here leaves the switcher as it was; the page itself says what went wrong.
    switcher.update(route).catch(() => {})
    const page = pageFor(route)
    page(view, { navigate: router.navigate, isCurrent: () => current === generation })
      .catch((error: unknown) => {
        if (current !== generation) return
        // Headed like every page, so that the title and a screen reader's heading list say what happened.
        replaceChildren(
          view,
          h('h1', {}, 'This page could not be shown'),
          errorMessage(error),
          h('p', {}, link(paths.projects(), 'Back to your projects')),
        )
      })
      .finally(() => {
        if (current !== generation) return
        // The heading's first text: a project's name without its plan badge.
        document.title = `${view.querySelector('h1')?.firstChild?.textContent ?? 'Dashboard'} · Countersign`
        // After a move within the dashboard, a screen reader starts reading at the new page, not at the old link.
        if (current > 1) view.focus({ preventScroll: true })
      })
  }
  const router = startRouter(render)
  render()
}

start()
