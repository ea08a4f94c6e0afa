// The onRequest hook of every session endpoint (the dashboard's /api/v1/projects... and /api/v1/session):
// a valid session cookie, and for a state-changing request an Origin equal to PUBLIC_URL's origin (so that
// another site cannot make a signed-in browser act). API keys are not looked at: they never open these endpoints.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { SESSION_ABSOLUTE_TTL_MS } from '../../features/accounts/session-tokens.js'
import type { ActiveSession, SessionService } from '../../features/accounts/sessions.js'
import { forbidden, unauthorized } from '../errors.js'
import { consumePerMinute, type RateLimiter } from '../rate-limit/rate-limiter.js'
import { type CookieOptions, readCookie } from './cookies.js'

declare module 'fastify' {
  interface FastifyRequest {
    dashboardSession: ActiveSession | null
  }
}

const STATE_CHANGING_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

export interface NamedCookie extends CookieOptions {
  name: string
}

/**
 * The session cookie: the whole site, Secure under https, kept by the browser as long as a session can last. Under
 * https it is `__Host-cs_session`: browsers accept that name only Secure, for Path=/ and without a Domain, so no
 * other host (a sibling subdomain) can set or shadow it. Plain http (local development) has no such guarantee.
 */
export function sessionCookie(publicUrl: string): NamedCookie {
  const secure = new URL(publicUrl).protocol === 'https:'
  return { name: secure ? '__Host-cs_session' : 'cs_session', path: '/', secure, maxAgeSeconds: SESSION_ABSOLUTE_TTL_MS / 1000 }
}

export function sessionTokenOf(request: FastifyRequest, cookie: NamedCookie): string | undefined {
  return readCookie(request.headers.cookie, cookie.name)
}

/** 403 unless a state-changing request comes from a page of this service. */
export function assertSameOrigin(request: FastifyRequest, publicOrigin: string): void {
  if (!STATE_CHANGING_METHODS.has(request.method)) return
  const origin = request.headers.origin
  if (origin === undefined) throw forbidden(`Missing Origin header: state-changing dashboard requests must come from ${publicOrigin}`)
  if (origin !== publicOrigin) throw forbidden(`Origin ${origin} may not change anything here: only ${publicOrigin} may`)
}

export interface SessionAuthDeps {
  sessions: SessionService
  publicUrl: string
  /** How to sign in on this server, for the 401 message. */
  signInHint: string
  /** Counts each account's requests (SESSION_REQUESTS_PER_MINUTE), across instances with Redis. */
  rateLimiter: RateLimiter
  now: () => number
}

/**
 * An account's dashboard requests a minute, all its sessions and endpoints together. The dashboard itself makes a few
 * a page; a person never comes near. Without a bound, a signed-in script could queue test deliveries, retries and
 * website checks as fast as it could send them: database rows and outbound requests for nothing, at every tenant's cost.
 */
export const SESSION_REQUESTS_PER_MINUTE = 600

export function sessionAuthHook(deps: SessionAuthDeps) {
  const publicOrigin = new URL(deps.publicUrl).origin
  const cookie = sessionCookie(deps.publicUrl)
  return async function authenticateSession(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    // Session responses carry account data and, once, full API keys: no cache may keep them.
    reply.header('cache-control', 'no-store')
    const session = await deps.sessions.authenticate(sessionTokenOf(request, cookie))
    if (!session) throw unauthorized(`Not signed in: ${deps.signInHint}`)
    assertSameOrigin(request, publicOrigin)
    const count = { key: `session:${session.account.id}`, limit: SESSION_REQUESTS_PER_MINUTE, what: 'dashboard requests for this account' }
    await consumePerMinute(deps.rateLimiter, count, deps.now)
    request.dashboardSession = session
  }
}

/** The session set by the hook; routes under the hook always have one. */
export function sessionOf(request: FastifyRequest): ActiveSession {
  if (!request.dashboardSession) throw unauthorized('Not signed in')
  return request.dashboardSession
}
