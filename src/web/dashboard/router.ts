// The dashboard's client-side routes: every page lives under /dashboard, and the server answers each of these paths
// with the same shell, so that a reload or a shared link lands on the same page.

export type Route =
  | { page: 'projects' }
  | { page: 'overview'; projectId: string }
  | { page: 'keys'; projectId: string }
  | { page: 'payloads'; projectId: string }
  | { page: 'payload'; projectId: string; uuid: string }
  | { page: 'webhooks'; projectId: string }
  | { page: 'settings'; projectId: string }
  | { page: 'not-found' }

export type ProjectPage = 'overview' | 'keys' | 'payloads' | 'webhooks' | 'settings'

export function parseRoute(pathname: string): Route {
  const parts = pathname.replace(/\/+$/, '').split('/').slice(1).map(decodeURIComponent)
  if (parts[0] !== 'dashboard') return { page: 'not-found' }
  if (parts.length === 1) return { page: 'projects' }
  const [, section, projectId, tab, uuid] = parts
  if (section !== 'projects' || !projectId) return { page: 'not-found' }
  if (parts.length === 3) return { page: 'overview', projectId }
  if (parts.length === 4 && (tab === 'keys' || tab === 'payloads' || tab === 'webhooks' || tab === 'settings'))
    return { page: tab, projectId }
  if (parts.length === 5 && tab === 'payloads' && uuid) return { page: 'payload', projectId, uuid }
  return { page: 'not-found' }
}

export const paths = {
  projects: () => '/dashboard',
  project: (projectId: string, page: ProjectPage = 'overview') =>
    `/dashboard/projects/${encodeURIComponent(projectId)}${page === 'overview' ? '' : `/${page}`}`,
  payload: (projectId: string, uuid: string) => `/dashboard/projects/${encodeURIComponent(projectId)}/payloads/${encodeURIComponent(uuid)}`,
}

/**
 * Follows dashboard links without reloading the page: a plain left click on a same-origin link under /dashboard
 * becomes a history entry and a call to `render`; back and forward render again. Other clicks keep the browser's
 * own behaviour (a new tab, a download).
 */
export function startRouter(render: () => void): { navigate(url: string, replace?: boolean): void } {
  const navigate = (url: string, replace = false) => {
    if (replace) history.replaceState(null, '', url)
    else history.pushState(null, '', url)
    render()
    if (!replace) window.scrollTo(0, 0)
  }
  document.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
    const link = (event.target as Element | null)?.closest('a')
    if (!link || link.target || link.hasAttribute('download')) return
    const url = new URL(link.href, location.href)
    if (url.origin !== location.origin || !url.pathname.startsWith('/dashboard')) return
    event.preventDefault()
    navigate(url.pathname + url.search)
  })
  window.addEventListener('popstate', render)
  return { navigate }
}
