// The onRequest hook of every API-key endpoint: who is calling, and may they call again this minute. Failed
// authentications are limited per client address, so that guessing keys, or a flood of unknown ones, is cut short.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ApiKeyAuthenticator } from '../../features/projects/api-key-authenticator.js'
import type { ApiKeyPrincipal } from '../../features/projects/api-keys-repository.js'
import type { PlanLimits, PlanName } from '../../features/projects/plans.js'
import { AppError, badRequest, tooManyRequests, unauthorized } from '../errors.js'
import { clientAddressKey } from '../ip-address.js'
import { type Count, type RateLimitDecision, type RateLimiter, retryAfterSeconds, secondsUntil } from '../rate-limit/rate-limiter.js'

declare module 'fastify' {
  interface FastifyRequest {
    principal: ApiKeyPrincipal | null
  }
  interface FastifyContextConfig {
    /**
     * The route's handler counts the request's rate itself, after validation, together with a limit of its own in one
     * trip to the store (the poll gate of a payload's GET). It takes attachValidation and counts before it answers a 422.
     */
    countsInHandler?: boolean
  }
}

const RATE_WINDOW_MS = 60_000
const BEARER = /^Bearer +(\S+) *$/i

export interface ApiKeyAuthDeps {
  authenticator: ApiKeyAuthenticator
  rateLimiter: RateLimiter
  limits: Record<PlanName, PlanLimits>
  now: () => number
}

export interface ApiKeyAuthHookDeps extends ApiKeyAuthDeps {
  /** Failed authentications a client address may make per minute; past them, 429 before any key is looked up. */
  authFailuresPerMinute: number
  /**
   * Whether a later hook counts this request's rate instead (the Idempotency-Key hook, which lets go of the key at a
   * 429: idempotency.ts, countsAfterIdempotencyCheck).
   */
  countedLater: (request: FastifyRequest) => boolean
}

export function apiKeyAuthHook(deps: ApiKeyAuthHookDeps) {
  const countRequest = requestCounter(deps)
  return async function authenticateApiKey(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const failures = `auth-failures:${clientAddressKey(request.ip)}`
    const failureLimit = deps.authFailuresPerMinute
    const refuseWhileLimited = async () => {
      const untilMs = await deps.rateLimiter.exhaustedUntil(failures, failureLimit, RATE_WINDOW_MS)
      if (untilMs !== undefined) throw tooManyFailures(failureLimit, Math.max(1, secondsUntil(untilMs, deps.now())))
    }
    try {
      request.principal = await deps.authenticator.authenticate(apiKeyOf(request), refuseWhileLimited)
    } catch (error) {
      if (error instanceof AppError && error.statusCode === 401) {
        const counted = await deps.rateLimiter.consume(failures, failureLimit, RATE_WINDOW_MS)
        if (!counted.allowed) throw tooManyFailures(failureLimit, retryAfterSeconds(counted, deps.now()))
      }
      throw error
    }
    // A request with an Idempotency-Key is counted by the idempotency hook, which lets go of its claim at a 429.
    if (!deps.countedLater(request) && request.routeOptions.config.countsInHandler !== true) await countRequest(request, reply)
  }
}

/**
 * Counts an authenticated request against its project's rate per minute: the rate headers, or 429. Given `then`, a
 * limit the request passes next, counts it too (only when the rate allows the request) and returns its decision.
 */
export type RequestCounter = (request: FastifyRequest, reply: FastifyReply, then?: Count) => Promise<RateLimitDecision | undefined>

export function requestCounter(deps: Pick<ApiKeyAuthDeps, 'rateLimiter' | 'limits' | 'now'>): RequestCounter {
  return async function countRequest(request, reply, then) {
    const principal = principalOf(request)
    const limit = deps.limits[principal.plan].requestsPerMinute
    const rate = { key: `rate:${principal.projectId}`, limit, windowMs: RATE_WINDOW_MS }
    const [decision, next] = then
      ? await deps.rateLimiter.consumeInTurn(rate, then)
      : [await deps.rateLimiter.consume(rate.key, rate.limit, rate.windowMs), undefined]
    const nowMs = deps.now()
    reply.header('x-ratelimit-limit', String(decision.limit))
    reply.header('x-ratelimit-remaining', String(decision.remaining))
    reply.header('x-ratelimit-reset', String(secondsUntil(decision.resetAtMs, nowMs)))
    if (!decision.allowed) {
      const retryAfter = retryAfterSeconds(decision, nowMs)
      throw tooManyRequests(`Rate limit exceeded: ${limit} requests per minute for this project; retry in ${retryAfter} s`, retryAfter)
    }
    return next
  }
}

function tooManyFailures(limit: number, retryAfter: number): AppError {
  return tooManyRequests(
    `Too many failed authentications from this address (${limit} per minute): check the API key; retry in ${retryAfter} s`,
    retryAfter,
  )
}

/** The principal set by the hook; routes under the hook always have one. */
export function principalOf(request: FastifyRequest): ApiKeyPrincipal {
  if (!request.principal) throw unauthorized('Missing API key')
  return request.principal
}

function apiKeyOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization
  // The hook runs before the route's schema has checked the query string.
  const query =
    typeof request.query === 'object' && request.query !== null && 'api_key' in request.query ? request.query.api_key : undefined
  const fromQuery = typeof query === 'string' ? query : undefined
  if (Array.isArray(query)) throw badRequest('Send the api_key query parameter once')
  if (header === undefined) return fromQuery
  // Node keeps the first of several Authorization headers and drops the others without a word: refused instead, as two
  // keys in one request are.
  if (authorizationHeaders(request.raw.rawHeaders) > 1) throw badRequest('Send one Authorization header')
  const match = BEARER.exec(header)
  if (!match) throw unauthorized('Malformed Authorization header: use "Authorization: Bearer <API key>"')
  if (fromQuery !== undefined && fromQuery !== match[1]) {
    throw badRequest('Two different API keys were sent: use the Authorization header or the api_key query parameter, not both')
  }
  return match[1]
}

function authorizationHeaders(rawHeaders: readonly string[]): number {
  let count = 0
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]?.toLowerCase() === 'authorization') count++
  return count
}
