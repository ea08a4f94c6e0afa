// The dashboard's pages: GET /dashboard and every path under it answer with the same shell, and the script routes
// in the browser. Its bundle is served under /assets/ by the static files of the signing page (sign-page.ts).
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import path from 'node:path'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { DASHBOARD_CSP, renderDashboardHtml } from '../web/dashboard/page-html.js'
import { DEFAULT_WEB_ROOT } from './sign-page.js'

export interface DashboardDeps {
  /** The directory the web build wrote (scripts/build-web.mjs); only checked, to warn when the bundle is missing. */
  webRoot?: string
}

export async function dashboardRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const webRoot = deps.webRoot ?? DEFAULT_WEB_ROOT
  if (!existsSync(path.join(webRoot, 'dashboard.js'))) {
    app.log.warn({ webRoot }, 'the dashboard bundle is missing: run `npm run build`')
  }
  const html = renderDashboardHtml({ scriptSrc: '/assets/dashboard.js', styleHref: '/assets/dashboard.css' })
  const etag = `"${createHash('sha256').update(html).digest('base64url').slice(0, 27)}"`

  const serveShell = async (request: FastifyRequest, reply: FastifyReply) => {
    reply.headers({
      'content-security-policy': DASHBOARD_CSP,
      'x-frame-options': 'DENY',
      'referrer-policy': 'same-origin',
      // The entry files keep their names across builds: caches revalidate the shell on every load.
      'cache-control': 'no-cache',
      etag,
    })
    if (request.headers['if-none-match'] === etag) return reply.code(304).send()
    return reply.type('text/html; charset=utf-8').send(html)
  }
  app.get('/dashboard', { schema: { hide: true } }, serveShell)
  app.get('/dashboard/*', { schema: { hide: true } }, serveShell)
}
