// Where the signing pages have an origin of their own (SIGNING_URL), each page is served on its own host only, so that
// a script running on a signing page never runs beside the dashboard's session: the session cookie belongs to
// PUBLIC_URL's host alone, and the signing page asked for there is sent to the signing host (and the dashboard and its
// sign-in, asked for on the signing host, to PUBLIC_URL's). Requests on any other host (a health check by address, a
// proxy that does not pass the Host on) are served as they come: redirecting them could only loop.
import type { FastifyInstance, FastifyRequest } from 'fastify'

/** The routes of the signing page: the document whose scripts show the payload to the user. */
const SIGNING_PAGE_ROUTES = new Set(['/sign/:uuid'])
/** The routes of the dashboard and its sign-in: the documents that carry or set the session. */
const DASHBOARD_PAGE_ROUTES = new Set(['/dashboard', '/dashboard/*', '/auth/login', '/auth/callback', '/auth/local', '/auth/methods'])

export function registerPageOrigins(app: FastifyInstance, origins: { publicUrl: string; signingUrl: string }): void {
  if (origins.signingUrl === origins.publicUrl) return
  const dashboardHost = new URL(origins.publicUrl)
  const signingHost = new URL(origins.signingUrl)
  app.addHook('onRequest', async (request, reply) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return
    // The target is the path as asked (origin-form); anything else is not redirected, so no host but ours is named.
    if (!request.url.startsWith('/') || request.url.startsWith('//')) return
    const route = request.routeOptions.url ?? ''
    if (SIGNING_PAGE_ROUTES.has(route) && isAskedOf(request, dashboardHost)) {
      return reply.redirect(`${origins.signingUrl}${request.url}`, 307)
    }
    if (DASHBOARD_PAGE_ROUTES.has(route) && isAskedOf(request, signingHost)) {
      return reply.redirect(`${origins.publicUrl}${request.url}`, 307)
    }
  })
}

/** Whether the request names the origin's host (Host, or X-Forwarded-Host from a trusted proxy), port included. */
function isAskedOf(request: FastifyRequest, origin: URL): boolean {
  try {
    return new URL(`${origin.protocol}//${request.host}`).host === origin.host
  } catch {
    return false
  }
}
