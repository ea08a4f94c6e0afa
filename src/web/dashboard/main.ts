// The dashboard's entry: finds who is signed in, then renders the page of the current path into the shell's <main>.
// Without a session it shows how to sign in on this server.
import { ApiError } from '../shared/api-client.js'
import { type Account, api } from './api.js'
import type { Page } from './page.js'
import { keysPage } from './pages/keys.js'
import { overviewPage } from './pages/overview.js'
import { payloadPage, payloadsPage } from './pages/payloads.js'
import { projectsPage } from './pages/projects.js'
import { signInPage } from './pages/sign-in.js'
import { webhooksPage } from './pages/webhooks.js'
import { parseRoute, paths, type Route, startRouter } from './router.js'
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
    case 'not-found':
      return async (view) =>
        replaceChildren(view, h('h1', {}, 'Page not found'), h('p', {}, link(paths.projects(), 'Back to your projects')))
  }
}

function header(account: Account): HTMLElement {
  // A real form post: the browser adds the Origin header the server checks, and follows the redirect back here.
  const signOut = h(
    'form',
    { className: 'sign-out', attrs: { method: 'post', action: '/auth/logout' } },
    h('button', { className: 'button secondary', attrs: { type: 'submit' } }, 'Sign out'),
  )
  return h(
    'header',
    { className: 'top-bar' },
    link(paths.projects(), 'Countersign', { className: 'brand' }),
    h('span', { className: 'account', testId: 'account' }, account.email ?? account.name ?? 'Signed in'),
    signOut,
  )
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
  replaceChildren(root, header(account), view)
  let generation = 0
  const render = () => {
    generation += 1
    const current = generation
    const route = parseRoute(location.pathname)
    replaceChildren(view, loading())
    const page = pageFor(route)
    page(view, { navigate: router.navigate, isCurrent: () => current === generation })
      .catch((error: unknown) => {
        if (current === generation) replaceChildren(view, errorMessage(error), h('p', {}, link(paths.projects(), 'Back to your projects')))
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
