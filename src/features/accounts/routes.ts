// Dashboard sign-in and sign-out (docs/dashboard-auth.md): the OpenID Connect code flow, the local
// admin's one-time link when no provider is configured, logout, and GET /api/v1/session for the dashboard.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { deriveStateKey, openState, sealState } from '../../platform/crypto/signed-state.js'
import { AppError, badRequest, notFound, unauthorized } from '../../platform/errors.js'
import { cookieAttributes, readCookie } from '../../platform/http/cookies.js'
import { errorResponses } from '../../platform/http/schemas.js'
import { registerPageSecurityHeaders } from '../../platform/http/security-headers.js'
import { assertSameOrigin, sessionCookie as sessionCookieFor, sessionOf, sessionTokenOf } from '../../platform/http/session-auth.js'
import { renderSignInProblemHtml, type SignInProblem } from '../../web/dashboard/sign-in-problem-html.js'
import type { OidcFlow, OidcSignIn } from './oidc-sign-in.js'
import { LocalSignInQuery, SessionView, SignInMethods } from './schemas.js'
import type { AccountService } from './service.js'
import type { SessionService } from './sessions.js'

/** Time to sign in at the provider; the flow cookie and its signed content both end then. */
const FLOW_TTL_MS = 10 * 60_000

/** How to sign in on a server with or without OpenID Connect: the 401 of a session endpoint says it. */
export function signInHint(oidcConfigured: boolean): string {
  return oidcConfigured
    ? 'sign in at /auth/login'
    : 'open the one-time sign-in link printed by `countersign serve`, or run `countersign login-link` for a fresh one'
}

export interface AuthRoutesDeps {
  publicUrl: string
  accounts: AccountService
  sessions: SessionService
  /** Undefined when OIDC is not configured: the local admin's links sign in instead. */
  oidc: OidcSignIn | undefined
  /** The flow cookie is signed with a key derived from it. */
  serverSecret: string
  now: () => number
}

export const authRoutes: FastifyPluginAsyncTypebox<AuthRoutesDeps> = async (app, deps) => {
  const { oidc, publicUrl } = deps
  const dashboardUrl = `${publicUrl}/dashboard`
  const sessionCookie = sessionCookieFor(publicUrl)
  // Under https the __Host- prefix, as the session's: browsers accept it only from this very host, Secure, on Path=/
  // and without a Domain, so a sibling host cannot plant its own sign-in's flow in a visitor's browser and have the
  // callback sign the visitor in to the sibling's account (a __Secure- cookie it could set with Domain=parent).
  const flowCookie = {
    name: sessionCookie.secure ? '__Host-cs_oidc_flow' : 'cs_oidc_flow',
    path: '/',
    secure: sessionCookie.secure,
    maxAgeSeconds: FLOW_TTL_MS / 1000,
  }
  const sessionAttributes = cookieAttributes(sessionCookie)
  const flowAttributes = cookieAttributes(flowCookie)
  const flowKey = deriveStateKey(deps.serverSecret, 'oidc-flow')
  const publicOrigin = new URL(publicUrl).origin

  // Every answer here sets or clears a credential (or redirects to the provider with a fresh state): none is stored.
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('cache-control', 'no-store')
  })

  // A logout form posts an empty urlencoded body; the app otherwise parses only JSON.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, _body, done) => done(null, undefined))

  /** Signs the account in: a new session and cookie, the browser's previous session ended, then on to the dashboard. */
  async function signIn(request: FastifyRequest, reply: FastifyReply, accountId: string): Promise<FastifyReply> {
    const session = await deps.sessions.start(accountId, sessionTokenOf(request, sessionCookie))
    reply.setCookie(sessionCookie.name, session.token, sessionAttributes)
    return reply.redirect(dashboardUrl, 303)
  }

  // How this server signs people in, for the dashboard's sign-in page.
  app.get('/auth/methods', { schema: { hide: true, response: { 200: SignInMethods } } }, async () => ({
    oidc: oidc !== undefined,
    localLink: oidc === undefined,
  }))

  // The routes a browser opens: under the pages' security headers, as the dashboard's, since a failure answers a browser
  // with a page (renderSignInProblemHtml); any other client gets the error as JSON, as everywhere else.
  const pageRoutes: FastifyPluginAsyncTypebox = async (page) => {
    await registerPageSecurityHeaders(page)
    // The answer to a failure depends on Accept (a page or JSON).
    page.addHook('onRequest', async (_request, reply) => {
      reply.header('vary', 'Accept')
    })
    page.setErrorHandler((error: FastifyError, request, reply) => {
      const problem = acceptsHtml(request) ? signInProblemOf(error, request.routeOptions.url ?? '') : undefined
      // Left to the application's handler: it logs what must be logged and answers JSON.
      if (!problem) throw error
      return reply.code(problem.status).type('text/html; charset=utf-8').send(renderSignInProblemHtml(problem.page, DASHBOARD_CSS))
    })

    page.get('/auth/login', { schema: { hide: true } }, async (_request, reply) => {
      if (!oidc) throw notFound(`OpenID Connect sign-in is not configured on this server: ${signInHint(false)}`)
      const flow = oidc.newFlow()
      const authorizationUrl = await oidc.authorizationUrl(flow)
      reply.setCookie(flowCookie.name, sealState(flowKey, flow, deps.now() + FLOW_TTL_MS), flowAttributes)
      return reply.redirect(authorizationUrl, 302)
    })

    page.get('/auth/callback', { schema: { hide: true } }, async (request, reply) => {
      if (!oidc) throw notFound(`OpenID Connect sign-in is not configured on this server: ${signInHint(false)}`)
      // The flow is single-use whatever the outcome; the provider's codes are single-use too, so a replayed
      // callback fails even with the cookie replayed alongside it.
      reply.clearCookie(flowCookie.name, flowAttributes)
      const sealed = readCookie(request.headers.cookie, flowCookie.name)
      const flow = sealed === undefined ? undefined : asFlow(openState(flowKey, sealed, deps.now()))
      if (!flow) throw badRequest('Sign-in expired or was started in another browser: start again at /auth/login')
      const queryStart = request.url.indexOf('?')
      const callbackUrl = new URL(`${publicUrl}/auth/callback${queryStart === -1 ? '' : request.url.slice(queryStart)}`)
      const identity = await oidc.identify(callbackUrl, flow)
      const account = await deps.accounts.recordSignIn(identity)
      return signIn(request, reply, account.id)
    })

    page.get('/auth/local', { schema: { hide: true, querystring: LocalSignInQuery } }, async (request, reply) => {
      // The link is a credential: keep it out of the Referer of whatever the browser loads next.
      reply.header('referrer-policy', 'no-referrer')
      if (oidc) throw notFound('Local sign-in links are turned off because OpenID Connect is configured: sign in at /auth/login')
      const accountId = await deps.sessions.redeemLoginToken(request.query.token)
      if (accountId) return signIn(request, reply, accountId)
      throw unauthorized(
        'This sign-in link is invalid, already used or expired (links last 15 minutes): run `countersign login-link` for a new one',
      )
    })
  }
  await app.register(pageRoutes)

  app.post('/auth/logout', { schema: { hide: true } }, async (request, reply) => {
    assertSameOrigin(request, publicOrigin)
    await deps.sessions.end(sessionTokenOf(request, sessionCookie))
    reply.clearCookie(sessionCookie.name, sessionAttributes)
    return reply.redirect(dashboardUrl, 303)
  })
}

/** GET /api/v1/session, registered under the session hook: who is signed in. */
export const sessionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/session',
    {
      schema: {
        summary: 'The signed-in dashboard account',
        description: 'Session-authenticated (dashboard cookie). 401 when not signed in.',
        tags: ['dashboard'],
        response: { 200: SessionView, ...errorResponses(401) },
      },
    },
    async (request) => {
      const { account } = sessionOf(request)
      return { account: { id: account.id, email: account.email, name: account.name } }
    },
  )
}

const DASHBOARD_CSS = '/assets/dashboard.css'

/**
 * The page for a failure at one of the sign-in routes, or undefined for one the application's handler answers (an
 * error that is not the client's or the provider's: it is logged there, and a browser gets its JSON).
 */
function signInProblemOf(error: FastifyError, route: string): { status: number; page: SignInProblem } | undefined {
  const status = error instanceof AppError ? error.statusCode : error.validation ? 422 : undefined
  if (route === '/auth/local') {
    if (status === 404) return { status, page: { kind: 'links-off' } }
    return status === 401 || status === 422 ? { status, page: { kind: 'link' } } : undefined
  }
  if (status === 404) return { status, page: { kind: 'provider-off' } }
  return status === 400 || status === 403 || status === 502
    ? { status, page: { kind: 'provider', status, message: error.message } }
    : undefined
}

/** Whether the client names HTML among what it accepts, as a browser opening a page does (a bare wildcard is not enough). */
function acceptsHtml(request: FastifyRequest): boolean {
  return /(^|,)\s*text\/html\s*(;|,|$)/.test(request.headers.accept ?? '')
}

function asFlow(value: unknown): OidcFlow | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const { state, nonce, codeVerifier } = value as Record<string, unknown>
  if (typeof state !== 'string' || typeof nonce !== 'string' || typeof codeVerifier !== 'string') return undefined
  return { state, nonce, codeVerifier }
}
