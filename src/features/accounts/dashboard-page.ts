// The dashboard's pages: GET /dashboard and every path under it answer with the same shell, and the script routes
// in the browser. Its bundle is served under /assets/ by the static files of the signing page (features/signing/page.ts).
import type { FastifyInstance } from 'fastify'
import { htmlShellHandler } from '../../platform/http/html-shell.js'
import { DASHBOARD_CSP, renderDashboardHtml } from '../../web/dashboard/page-html.js'
import { DEFAULT_WEB_ROOT } from '../signing/page.js'

export interface DashboardDeps {
  /** The directory the web build wrote (scripts/build-web.mjs); only checked, to warn when the bundle is missing. */
  webRoot?: string
}

export async function dashboardRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const serveShell = htmlShellHandler({
    html: renderDashboardHtml({ scriptSrc: '/assets/dashboard.js', styleHref: '/assets/dashboard.css' }),
    contentSecurityPolicy: DASHBOARD_CSP,
    referrerPolicy: 'same-origin',
    webRoot: deps.webRoot ?? DEFAULT_WEB_ROOT,
    bundleFile: 'dashboard.js',
    pageName: 'dashboard',
    log: app.log,
  })
  app.get('/dashboard', { schema: { hide: true } }, serveShell)
  app.get('/dashboard/*', { schema: { hide: true } }, serveShell)
}
